package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
	"github.com/lockstep-dev/lockstep/manifest"
)

// digest returns "sha256:" and 64 times c: fixtures read better with them.
func digest(c string) manifest.Digest {
	return manifest.MustParseDigest("sha256:" + strings.Repeat(c, 64))
}

var createdAt = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

// testManifest is the release the fixtures in testdata/requests are
// judged against (testdata/manifest.json is generation 42).
func testManifest(gen int64) *manifest.Manifest {
	return &manifest.Manifest{
		APIVersion: manifest.APIVersion,
		Kind:       manifest.Kind,
		Release:    manifest.Release{Name: "store-web", Generation: gen, CreatedAt: createdAt},
		Assets:     manifest.Assets{CDN: []string{}, Files: []manifest.File{}, Fingerprint: manifest.Fingerprint(nil)},
		Images: []manifest.Image{
			{
				Name: "web", Ref: "registry.lockstep.test/store/web:v1.4.2", Repository: "registry.lockstep.test/store/web", Tag: "v1.4.2",
				Digest: digest("1"), MediaType: "application/vnd.oci.image.index.v1+json",
				Platforms: []manifest.Platform{
					{OS: "linux", Architecture: "amd64", Digest: digest("2"), Config: digest("3")},
					{OS: "linux", Architecture: "arm64", Digest: digest("4"), Config: digest("5")},
				},
			},
			{
				Name: "migrate", Ref: "registry.lockstep.test/store/migrate:v1.4.2", Repository: "registry.lockstep.test/store/migrate", Tag: "v1.4.2",
				Digest: digest("6"), MediaType: "application/vnd.oci.image.manifest.v1+json",
				Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: digest("6"), Config: digest("7")}},
			},
			{
				Name: "nginx", Ref: "nginx:1.27", Repository: "docker.io/library/nginx", Tag: "1.27",
				Digest: digest("8"), MediaType: "application/vnd.oci.image.index.v1+json",
				Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: digest("9"), Config: digest("a")}},
			},
		},
	}
}

// encodeManifest returns m's canonical bytes.
func encodeManifest(t testing.TB, m *manifest.Manifest) []byte {
	t.Helper()
	raw, err := m.Encode()
	if err != nil {
		t.Fatalf("encoding manifest: %v", err)
	}
	return raw
}

// accepted returns m as an unsigned Accepted.
func accepted(t testing.TB, m *manifest.Manifest) *Accepted {
	t.Helper()
	s, err := manifest.NewSigned(encodeManifest(t, m), "test")
	if err != nil {
		t.Fatalf("NewSigned: %v", err)
	}
	a, err := Accept(s, true, createdAt)
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	return a
}

// keyVerifier verifies a base64 ECDSA P-256 signature over the SHA-256 of
// the manifest's bytes: the shape of a cosign blob signature with a key.
type keyVerifier struct{ pub *ecdsa.PublicKey }

func (v keyVerifier) Verify(_ context.Context, s *manifest.Signed) error {
	if len(s.Signature) == 0 {
		return errors.New("manifest is not signed")
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(s.Signature)))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(s.Raw)
	if !ecdsa.VerifyASN1(v.pub, sum[:], sig) {
		return errors.New("invalid signature")
	}
	return nil
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sign returns the base64 signature of raw by k.
func sign(t testing.TB, k *ecdsa.PrivateKey, raw []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(raw)
	sig, err := ecdsa.SignASN1(rand.Reader, k, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return []byte(base64.StdEncoding.EncodeToString(sig))
}

// writeManifest writes m, signed by k (when not nil), to path and
// path.sig.
func writeManifest(t testing.TB, path string, m *manifest.Manifest, k *ecdsa.PrivateKey) {
	t.Helper()
	raw := encodeManifest(t, m)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if k != nil {
		if err := os.WriteFile(path+".sig", sign(t, k, raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// issue writes a serving certificate from ca for 127.0.0.1 and the
// webhook's Service name, with the given serial, and its key, to
// dir/tls.crt and dir/tls.key (through a rename, as a Secret volume update
// does), and returns their paths.
func issue(t testing.TB, ca *tlstest.CA, dir string, serial int64) (certFile, keyFile string) {
	t.Helper()
	cert, key := ca.Issue(t, &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "lockstep-webhook.lockstep.svc"},
		DNSNames:     []string{"lockstep-webhook.lockstep.svc"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	tlstest.WritePair(t, certFile, keyFile, tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key})
	return certFile, keyFile
}

// newTestLogger logs text to w at debug level.
func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// scrape returns m's exposition text.
func scrape(t testing.TB, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	return rec.Body.String()
}

// grep returns the lines of s containing sub, for failure messages.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
