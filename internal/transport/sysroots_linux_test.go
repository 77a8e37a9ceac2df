package transport

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// rootsReport is what the helper process prints: both pools' subjects,
// in the pools' order.
type rootsReport struct {
	Ours  [][]byte `json:"ours"` // nil: SystemRoots left the roots to Go
	Gos   [][]byte `json:"gos"`
	GoErr string   `json:"goErr,omitempty"`
	Equal bool     `json:"equal"`
}

// TestSystemRootsHelper is the other process of TestSystemRootsAreGos: Go
// loads its system roots once per process, so each layout gets one.
func TestSystemRootsHelper(t *testing.T) {
	if os.Getenv("LOCKSTEP_ROOTS_HELPER") != "1" {
		t.Skip("the helper process of TestSystemRootsAreGos")
	}
	var r rootsReport
	ours := SystemRoots()
	gos, err := x509.SystemCertPool()
	if err != nil {
		r.GoErr = err.Error()
	}
	if ours != nil {
		//lint:ignore SA1019 compared, not used to verify: the pools' contents and order (SystemRoots' pool holds its roots, unlike SystemCertPool's on macOS)
		r.Ours = ours.Subjects()
		r.Equal = ours.Equal(gos)
	}
	if gos != nil {
		//lint:ignore SA1019 as above
		r.Gos = gos.Subjects()
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		t.Fatal(err)
	}
}

// rootsLayout builds files under dir and returns the environment that
// points Go at them (nil: the machine's own defaults).
type rootsLayout func(t *testing.T, dir string, cas []*x509.Certificate) []string

func certPEM(certs ...*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestSystemRootsAreGos: SystemRoots holds exactly the certificates of
// Go's x509.SystemCertPool, in its order, for layouts that try every rule
// of Go's loader (the first bundle file, SSL_CERT_FILE and SSL_CERT_DIR,
// symlinks within a directory and out of it, the bundle again in the
// directory, blocks Go skips, duplicates), and for this machine's own
// roots; and leaves the roots to Go when there are none.
func TestSystemRootsAreGos(t *testing.T) {
	if os.Getenv("LOCKSTEP_ROOTS_HELPER") == "1" {
		t.Skip("in the helper process")
	}
	var cas []*x509.Certificate
	for i := range 6 {
		cas = append(cas, tlstest.NewCAFrom(t, &x509.Certificate{
			Subject:   pkix.Name{CommonName: fmt.Sprintf("root %d", i)},
			NotBefore: time.Now().Add(-time.Hour),
			NotAfter:  time.Now().Add(time.Hour),
			KeyUsage:  x509.KeyUsageCertSign,
		}).Cert)
	}
	withHeaders := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: cas[4].Raw})
	trusted := pem.EncodeToMemory(&pem.Block{Type: "TRUSTED CERTIFICATE", Bytes: cas[4].Raw})
	trailing := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: append(slices.Clip(cas[5].Raw), 0, 0)})
	notDER := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not a certificate")})

	for _, tc := range []struct {
		name   string
		layout rootsLayout
		none   bool // SystemRoots leaves the roots to Go
	}{
		{"debian", func(t *testing.T, dir string, cas []*x509.Certificate) []string {
			bundle := certPEM(cas[0], cas[1], cas[2])
			bundle = append(bundle, withHeaders...)
			bundle = append(bundle, "# a comment\n"...)
			writeFile(t, dir+"/etc/ssl/certs/ca-certificates.crt", bundle)
			writeFile(t, dir+"/share/root1.crt", certPEM(cas[1]))
			writeFile(t, dir+"/share/root3.crt", certPEM(cas[3]))
			symlink(t, dir+"/share/root1.crt", dir+"/etc/ssl/certs/root1.pem")
			symlink(t, "root1.pem", dir+"/etc/ssl/certs/1a2b3c4d.0")
			symlink(t, dir+"/share/root3.crt", dir+"/etc/ssl/certs/root3.pem")
			symlink(t, "root3.pem", dir+"/etc/ssl/certs/5e6f7a8b.0")
			return []string{"SSL_CERT_FILE=" + dir + "/etc/ssl/certs/ca-certificates.crt", "SSL_CERT_DIR=" + dir + "/etc/ssl/certs"}
		}, false},
		{"what Go skips", func(t *testing.T, dir string, cas []*x509.Certificate) []string {
			writeFile(t, dir+"/bundle.pem", append(append(append(certPEM(cas[0]), trusted...), trailing...), notDER...))
			d := dir + "/certs"
			writeFile(t, d+"/headers.pem", withHeaders)
			writeFile(t, d+"/trailing.pem", trailing)
			writeFile(t, d+"/garbage", []byte("-----BEGIN CERTIFICATE-----\nnot base64\n"))
			writeFile(t, d+"/empty", nil)
			writeFile(t, d+"/sub/root2.pem", certPEM(cas[2]))           // a directory: not read
			symlink(t, "sub/root2.pem", d+"/through-sub.pem")           // a slash: read
			symlink(t, "missing.pem", d+"/dangling.0")                  // within, dangling
			symlink(t, dir+"/missing.pem", d+"/dangling-elsewhere.pem") // out, dangling
			writeFile(t, d+"/root5-then-0.pem", append(append(certPEM(cas[5]), trailing...), certPEM(cas[0])...))
			return []string{"SSL_CERT_FILE=" + dir + "/bundle.pem", "SSL_CERT_DIR=" + d}
		}, false},
		{"directories in order, one missing", func(t *testing.T, dir string, cas []*x509.Certificate) []string {
			// b then a: 4 3 1 2; a then b would be 4 1 3 2.
			writeFile(t, dir+"/a/z.pem", certPEM(cas[1], cas[3]))
			writeFile(t, dir+"/a/y.pem", certPEM(cas[4]))
			writeFile(t, dir+"/b/x.pem", certPEM(cas[1], cas[4], cas[2]))
			writeFile(t, dir+"/b/w.pem", certPEM(cas[3], cas[3])) // the same certificate twice
			writeFile(t, dir+"/b/v.pem", certPEM(cas[4]))         // the same bytes as a/y.pem
			return []string{"SSL_CERT_FILE=" + dir + "/no-such-bundle", "SSL_CERT_DIR=" + dir + "/b:" + dir + "/missing:" + dir + "/a"}
		}, false},
		{"bundle only", func(t *testing.T, dir string, cas []*x509.Certificate) []string {
			writeFile(t, dir+"/bundle.pem", certPEM(cas[2], cas[0], cas[2]))
			return []string{"SSL_CERT_FILE=" + dir + "/bundle.pem", "SSL_CERT_DIR=" + dir + "/missing"}
		}, false},
		{"no certificate anywhere", func(t *testing.T, dir string, cas []*x509.Certificate) []string {
			writeFile(t, dir+"/bundle.pem", notDER)
			writeFile(t, dir+"/certs/headers.pem", withHeaders)
			return []string{"SSL_CERT_FILE=" + dir + "/bundle.pem", "SSL_CERT_DIR=" + dir + "/certs"}
		}, true},
		{"nothing there", func(t *testing.T, dir string, cas []*x509.Certificate) []string {
			return []string{"SSL_CERT_FILE=" + dir + "/missing", "SSL_CERT_DIR=" + dir + "/missing"}
		}, true},
		{"this machine's bundle, this machine's directories", func(t *testing.T, dir string, cas []*x509.Certificate) []string {
			return []string{"SSL_CERT_DIR="} // empty: Go's default directories
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env := tc.layout(t, dir, cas)
			cmd := exec.Command(os.Args[0], "-test.run=^TestSystemRootsHelper$", "-test.count=1")
			cmd.Env = append(filterEnv(os.Environ(), "SSL_CERT_FILE=", "SSL_CERT_DIR="), "LOCKSTEP_ROOTS_HELPER=1")
			cmd.Env = append(cmd.Env, env...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			var r rootsReport
			line, _, _ := bytes.Cut(out, []byte("\n"))
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("helper's report %q: %v", out, err)
			}
			if tc.none {
				if r.Ours != nil {
					t.Fatalf("SystemRoots: %d certificates, want nil (Go's pool: %d, error %q)", len(r.Ours), len(r.Gos), r.GoErr)
				}
				if len(r.Gos) != 0 {
					t.Fatalf("SystemRoots is nil, but Go's pool has %d certificates", len(r.Gos))
				}
				return
			}
			if (r.GoErr != "" || len(r.Gos) == 0) && strings.HasPrefix(tc.name, "this machine") {
				t.Skipf("this machine has no system roots (%q)", r.GoErr)
			}
			if r.GoErr != "" || len(r.Gos) == 0 {
				t.Fatalf("this layout gives Go no roots (%q): the case tests nothing", r.GoErr)
			}
			if !r.Equal || !slices.EqualFunc(r.Ours, r.Gos, bytes.Equal) {
				t.Fatalf("SystemRoots: %d certificates %q\nGo's pool: %d %q (Equal %v)", len(r.Ours), r.Ours, len(r.Gos), r.Gos, r.Equal)
			}
		})
	}
}

func filterEnv(env []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		for _, p := range drop {
			if strings.HasPrefix(kv, p) {
				return true
			}
		}
		return false
	})
}

// useSystemRoots points the package's system roots at the files of env
// for one test, loaded afresh, and counts the loads.
func useSystemRoots(t *testing.T, file, dir string) *atomic.Int32 {
	t.Setenv("SSL_CERT_FILE", file)
	t.Setenv("SSL_CERT_DIR", dir)
	var loads atomic.Int32
	saved := systemRoots
	systemRoots = sync.OnceValue(func() *x509.CertPool {
		loads.Add(1)
		return loadRoots(rootFiles())
	})
	t.Cleanup(func() { systemRoots = saved })
	return &loads
}

// TestSystemRootsVerify: a client left to the system's roots accepts what
// Go would accept and refuses what Go would refuse: a root in the bundle
// or only in the directory verifies (directly and through an
// intermediate); a root in neither, a name the certificate does not hold,
// an expired certificate do not, and are reported with their error.
func TestSystemRootsVerify(t *testing.T) {
	bundled, dirOnly, elsewhere := tlstest.NewCA(t), tlstest.NewCA(t), tlstest.NewCA(t)
	inter := dirOnly.NewIntermediate(t, &x509.Certificate{
		Subject:   pkix.Name{CommonName: "intermediate"},
		NotBefore: time.Now().Add(-time.Hour),
		NotAfter:  time.Now().Add(time.Hour),
		KeyUsage:  x509.KeyUsageCertSign,
	})
	leaf, key := bundled.Issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "cdn.example"},
		NotBefore:   time.Now().Add(-time.Hour),
		NotAfter:    time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"cdn.example"}, // not 127.0.0.1
	})
	wrongName := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key}
	viaInter := inter.ValidFor(t, "via intermediate", time.Hour)
	viaInter.Certificate = append(viaInter.Certificate, inter.Cert.Raw)

	dir := t.TempDir()
	writeFile(t, dir+"/bundle.pem", certPEM(bundled.Cert))
	writeFile(t, dir+"/certs/dir-only.pem", certPEM(dirOnly.Cert))

	for _, tc := range []struct {
		name    string
		cert    tls.Certificate
		wantErr string // in the error and the certificate's report; "" verifies
	}{
		{"root in the bundle", bundled.ValidFor(t, "bundled", time.Hour), ""},
		{"root only in the directory", dirOnly.ValidFor(t, "dir only", time.Hour), ""},
		{"through an intermediate to the directory's root", viaInter, ""},
		{"root in neither", elsewhere.ValidFor(t, "elsewhere", time.Hour), "unknown authority"},
		{"a name the certificate does not hold", wrongName, "127.0.0.1"},
		{"expired", bundled.ValidFor(t, "expired", -time.Minute), "expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loads := useSystemRoots(t, dir+"/bundle.pem", dir+"/certs")
			srv := tlstest.Server(t, tc.cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			c := New(fast(), WithTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
			resp, err := get(t, c, srv.URL)
			if resp != nil {
				resp.Body.Close()
			}
			if n := loads.Load(); n != 1 {
				t.Errorf("system roots loaded %d times, want 1", n)
			}
			certs := c.Certificates()
			if len(certs) != 1 {
				t.Fatalf("Certificates() = %+v, want the server's", certs)
			}
			if tc.wantErr == "" {
				if err != nil || certs[0].Error != "" {
					t.Fatalf("GET %s: %v (certificate error %q), want verified", srv.URL, err, certs[0].Error)
				}
				return
			}
			var cve *tls.CertificateVerificationError
			if !errors.As(err, &cve) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("GET %s: %v, want a certificate verification error (%s)", srv.URL, err, tc.wantErr)
			}
			if !strings.Contains(certs[0].Error, tc.wantErr) {
				t.Errorf("certificate's error %q, want %q", certs[0].Error, tc.wantErr)
			}
		})
	}
}

// TestSystemRootsNotLoaded: the system's roots are not read by a client
// given roots of its own, by one that skips verification, or for plain
// http; and a default client (no TLS configuration) loads them.
func TestSystemRootsNotLoaded(t *testing.T) {
	ca := tlstest.NewCA(t)
	srv := tlstest.Server(t, ca.ValidFor(t, "srv", time.Hour), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	dir := t.TempDir()
	writeFile(t, dir+"/bundle.pem", certPEM(ca.Cert))
	for _, tc := range []struct {
		name  string
		opts  []Option
		url   string
		loads int32
	}{
		{"no TLS configuration", nil, srv.URL, 1},
		{"roots of its own", []Option{WithTLSConfig(&tls.Config{RootCAs: ca.Pool})}, srv.URL, 0},
		{"WithRootCAs", []Option{WithRootCAs(func() *x509.CertPool { return ca.Pool })}, srv.URL, 0},
		{"no verification", []Option{WithTLSConfig(&tls.Config{InsecureSkipVerify: true})}, srv.URL, 0},
		{"plain http", nil, "http://" + strings.TrimPrefix(srv.URL, "https://"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loads := useSystemRoots(t, dir+"/bundle.pem", dir+"/missing")
			c := New(fast(), tc.opts...)
			resp, err := get(t, c, tc.url)
			if resp != nil {
				resp.Body.Close()
			}
			if strings.HasPrefix(tc.url, "https:") && err != nil {
				t.Fatalf("GET %s: %v", tc.url, err)
			}
			if n := loads.Load(); n != tc.loads {
				t.Errorf("system roots loaded %d times, want %d", n, tc.loads)
			}
		})
	}
}
