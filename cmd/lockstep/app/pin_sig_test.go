package app

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcr "github.com/google/go-containerregistry/pkg/registry"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/internal/testkit/golden"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/pin"
)

// signedRegistry is pinRegistry with its pins: app:v1 (one image) and
// multi:v1 (an index of linux/amd64 and linux/arm64/v8), none signed yet.
// app:v1 is pushed again as an image of its own: in pinRegistry it is the
// index's linux/amd64 manifest, and verified signatures are cached by
// digest, whatever the repository.
type signedRegistry struct {
	host string
	pins pin.Report
}

func newSignedRegistry(t *testing.T) *signedRegistry {
	t.Helper()
	r := &signedRegistry{host: pinRegistry(t)}
	pushImg(t, r.host+"/app:v1", image(t, "linux", "amd64", "solo"))
	r.pins = pinJSON(t, ExitOK, "pin", "--format", "json", "app="+r.host+"/app:v1", "web="+r.host+"/multi:v1")
	return r
}

// sign signs, with sv, the image of role (index: the index itself) or,
// with platform set, that platform's manifest.
func (r *signedRegistry) sign(t *testing.T, sv sigsig.Signer, role, platform string) name.Digest {
	t.Helper()
	for _, im := range r.pins.Images {
		if im.Name != role {
			continue
		}
		d := im.Digest
		for _, p := range im.Platforms {
			if p.String() == platform {
				d = p.Digest
			}
		}
		ref, err := name.NewDigest(im.Repository + "@" + d.String())
		if err != nil {
			t.Fatal(err)
		}
		sigtest.SignImage(t, ref, sv, nil, nil, nil)
		return ref
	}
	t.Fatalf("no image %s", role)
	return name.Digest{}
}

// signAll signs every image and every platform manifest.
func (r *signedRegistry) signAll(t *testing.T, sv sigsig.Signer) {
	r.sign(t, sv, "app", "")
	r.sign(t, sv, "web", "linux/amd64")
	r.sign(t, sv, "web", "linux/arm64/v8")
}

func (r *signedRegistry) refs() []string {
	return []string{"app=" + r.host + "/app:v1", "web=" + r.host + "/multi:v1"}
}

// pinJSON runs pin (with --format json among args), wants exit code want,
// and decodes the report.
func pinJSON(t *testing.T, want int, args ...string) pin.Report {
	t.Helper()
	out, errs, code := pinCLI(t, args...)
	if code != want {
		t.Fatalf("lockstep %s: exit %d, want %d\nstderr: %s", strings.Join(args, " "), code, want, errs)
	}
	var r pin.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("lockstep %s: stdout does not decode: %v\n%s", strings.Join(args, " "), err, out)
	}
	return r
}

func writeKey(t *testing.T, sv sigsig.PublicKeyProvider) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(path, sigtest.PublicPEM(t, sv), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPinVerifyKey: pin --verify-key accepts images signed with the key
// (every platform of an index, by default), and refuses (exit 1, naming
// the image and the digest) unsigned ones, ones signed with another key,
// and an index signed at the top only unless the policy is index.
func TestPinVerifyKey(t *testing.T) {
	t.Parallel()
	key, other := sigtest.Key(t), sigtest.Key(t)
	pub := writeKey(t, key)

	t.Run("signed", func(t *testing.T) {
		r := newSignedRegistry(t)
		r.signAll(t, key)
		got := pinJSON(t, ExitOK, append([]string{"pin", "--format", "json", "--verify-key", pub}, r.refs()...)...)
		for i, im := range got.Images {
			s := im.Signature
			if s == nil || !s.Verified || s.Policy != "platforms" || !strings.HasPrefix(s.Signer, "key ") || s.Error != "" {
				t.Fatalf("image %s: signature %+v, want verified under policy platforms by a key", im.Name, s)
			}
			want := r.pins.Images[i].Platforms
			if len(s.Digests) != len(want) {
				t.Fatalf("image %s: verified %+v, want every platform %+v", im.Name, s.Digests, want)
			}
			for j, p := range want {
				if s.Digests[j].Digest != p.Digest {
					t.Errorf("image %s: verified %s, want %s (%s)", im.Name, s.Digests[j].Digest, p.Digest, p)
				}
			}
		}
		// The text output is the pins alone.
		out, errs, code := pinCLI(t, append([]string{"pin", "--verify-key", pub}, r.refs()...)...)
		if code != ExitOK || strings.Count(out, "\n") != 2 {
			t.Errorf("text: exit %d, stdout %q, stderr %s", code, out, errs)
		}
	})

	for _, tc := range []struct {
		name   string
		sign   func(*signedRegistry, *testing.T) string // returns the digest to be named
		flags  []string
		want   int
		stderr string
	}{
		{"unsigned", func(r *signedRegistry, t *testing.T) string {
			r.sign(t, key, "web", "linux/amd64")
			r.sign(t, key, "web", "linux/arm64/v8")
			return r.pins.Images[0].Digest.String()
		}, nil, ExitMismatch, "image app image "},
		{"another key", func(r *signedRegistry, t *testing.T) string {
			r.sign(t, key, "web", "linux/amd64")
			r.sign(t, key, "web", "linux/arm64/v8")
			return r.sign(t, other, "app", "").DigestStr()
		}, nil, ExitMismatch, "no signature verifies"},
		{"index signed at the top only, default policy", func(r *signedRegistry, t *testing.T) string {
			r.sign(t, key, "app", "")
			r.sign(t, key, "web", "")
			return r.pins.Images[1].Platforms[0].Digest.String()
		}, nil, ExitMismatch, "image web linux/amd64 "},
		{"index signed at the top only, policy index", func(r *signedRegistry, t *testing.T) string {
			r.sign(t, key, "app", "")
			r.sign(t, key, "web", "")
			return ""
		}, []string{"--image-signature-policy", "index"}, ExitOK, ""},
		{"one platform signed, that platform pinned", func(r *signedRegistry, t *testing.T) string {
			r.sign(t, key, "web", "linux/amd64")
			return ""
		}, []string{"--platform", "linux/amd64"}, ExitOK, ""},
		{"index and platforms signed, policy all", func(r *signedRegistry, t *testing.T) string {
			r.signAll(t, key)
			return r.pins.Images[1].Digest.String()
		}, []string{"--image-signature-policy", "all"}, ExitMismatch, "image web index "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newSignedRegistry(t)
			digest := tc.sign(r, t)
			refs := r.refs()
			if slicesContains(tc.flags, "--platform") {
				refs = refs[1:]
			}
			args := append(append([]string{"pin", "--verify-key", pub}, tc.flags...), refs...)
			out, errs, code := pinCLI(t, args...)
			if code != tc.want || !strings.Contains(errs, tc.stderr) || !strings.Contains(errs, digest) {
				t.Fatalf("lockstep %s: exit %d, stderr %q; want exit %d naming %q and %s", strings.Join(args, " "), code, errs, tc.want, tc.stderr, digest)
			}
			if code != ExitOK && out != "" {
				t.Errorf("refused, but stdout has pins: %q", out)
			}
			if code == ExitOK {
				return
			}
			// JSON: the images, and which one was refused and why.
			got := pinJSON(t, tc.want, append([]string{"pin", "--format", "json", "--verify-key", pub}, append(tc.flags, refs...)...)...)
			refused := 0
			for _, im := range got.Images {
				if im.Signature == nil {
					t.Fatalf("image %s: no signature report", im.Name)
				}
				if !im.Signature.Verified {
					refused++
					if !strings.Contains(im.Signature.Error, digest) {
						t.Errorf("image %s: error %q, want it to name %s", im.Name, im.Signature.Error, digest)
					}
				}
			}
			if refused != 1 {
				t.Errorf("JSON %+v: %d images refused, want 1", got.Images, refused)
			}
		})
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestPinVerifyKeyless: the keyless identity flags, offline against a
// trusted root file: the workflow's identity is accepted, another refused.
func TestPinVerifyKeyless(t *testing.T) {
	t.Parallel()
	ca := sigtest.NewCA(t)
	const issuer = "https://token.actions.githubusercontent.com"
	const wf = "https://github.com/lockstep-dev/store/.github/workflows/release.yml@refs/heads/main"
	r := newSignedRegistry(t)
	sv, cert := ca.Leaf(t, wf, issuer)
	d, err := name.NewDigest(r.pins.Images[0].Repository + "@" + r.pins.Images[0].Digest.String())
	if err != nil {
		t.Fatal(err)
	}
	sigtest.SignImage(t, d, sv, sigtest.CertPEM(t, cert), ca.ChainPEM(t), nil)
	trusted := sigtest.WriteTrustedRoot(t, ca)
	base := []string{"pin", "--offline", "--trusted-root", trusted, "--insecure-ignore-tlog", "--insecure-ignore-sct", "--certificate-oidc-issuer", issuer}
	if out, errs, code := pinCLI(t, append(base, "--certificate-identity", wf, "app="+r.host+"/app:v1")...); code != ExitOK {
		t.Errorf("keyless, the signer's identity: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	evil := "https://github.com/evil/x/.github/workflows/a.yml@refs/heads/main"
	if _, errs, code := pinCLI(t, append(base, "--certificate-identity", evil, "app="+r.host+"/app:v1")...); code != ExitMismatch || !strings.Contains(errs, d.DigestStr()) {
		t.Errorf("keyless, another identity: exit %d, stderr %s; want 1 naming %s", code, errs, d.DigestStr())
	}
}

// TestPinVerifyErrors: a registry that will not serve signatures is exit 3;
// a key that cannot be read is exit 2, before any request.
func TestPinVerifyErrors(t *testing.T) {
	key := sigtest.Key(t)
	pub := writeKey(t, key)
	reg := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, ".sig") {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		reg.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	pushImg(t, host+"/app:v1", image(t, "linux", "amd64", "1"))
	t.Setenv("LOCKSTEP_SIGNATURE_CACHE_DIR", "")
	if _, errs, code := pinCLI(t, "pin", "--verify-key", pub, host+"/app:v1"); code != ExitUnverified || !strings.Contains(errs, host) {
		t.Errorf("signatures unavailable: exit %d, stderr %s; want 3 naming the registry", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.pub")
	os.WriteFile(bad, []byte("not a key"), 0o644)
	for _, args := range [][]string{
		{"pin", "--verify-key", bad, host + "/app:v1"},
		{"pin", "--verify-key", filepath.Join(t.TempDir(), "missing.pub"), host + "/app:v1"},
		{"pin", "--verify-key", pub, "--image-signature-policy", "some", host + "/app:v1"},
		{"pin", "--verify-key", pub, "--certificate-identity", "x", host + "/app:v1"},
	} {
		if _, errs, code := pinCLI(t, args...); code != ExitInvalid {
			t.Errorf("lockstep %s: exit %d, want 2\nstderr: %s", strings.Join(args, " "), code, errs)
		}
	}
}

// TestPinJSONVerified checks the JSON shape with signatures verified
// against testdata/pin-verified.json.golden (the registry's address
// replaced by REGISTRY, the key's fingerprint by KEY): the fields of
// TestPinJSON's, and each image's "signature".
func TestPinJSONVerified(t *testing.T) {
	t.Parallel()
	key := sigtest.Key(t)
	r := newSignedRegistry(t)
	r.signAll(t, key)
	out, errs, code := pinCLI(t, append([]string{"pin", "--format", "json", "--verify-key", writeKey(t, key)}, r.refs()...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden.Check(t, "pin-verified.json.golden", strings.ReplaceAll(strings.ReplaceAll(out, r.host, "REGISTRY"), signature.Fingerprint(key), "KEY"))
}

// TestPinVerifyCosign: the real cosign CLI signs an image in a real
// docker-registry (`cosign sign --key`, no transparency log); lockstep pin
// --verify-key cosign.pub accepts it, and refuses an image cosign did not
// sign.
func TestPinVerifyCosign(t *testing.T) {
	t.Parallel()
	cosign := sigtest.RequireCosign(t)
	host := testenv.Registry(t)
	dir := t.TempDir()
	_, pub := cosign.GenerateKeyPair(t, dir)
	pushImg(t, host+"/shop/web:v1", image(t, "linux", "amd64", "cosign"))
	pushImg(t, host+"/shop/api:v1", image(t, "linux", "amd64", "unsigned"))
	pins := pinJSON(t, ExitOK, "pin", "--format", "json", host+"/shop/web:v1", host+"/shop/api:v1")
	web, api := pins.Images[0], pins.Images[1]
	cosign.MustRun(t, dir, "sign", "--key", "cosign.key", "--tlog-upload=false", "--allow-http-registry", "--allow-insecure-registry", "-y",
		web.Repository+"@"+web.Digest.String())
	if out, errs, code := pinCLI(t, "pin", "--verify-key", pub, host+"/shop/web:v1"); code != ExitOK || !strings.Contains(out, web.Digest.String()) {
		t.Errorf("pin --verify-key of the image cosign signed: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	if _, errs, code := pinCLI(t, "pin", "--verify-key", pub, host+"/shop/web:v1", host+"/shop/api:v1"); code != ExitMismatch ||
		!strings.Contains(errs, "image "+host+"/shop/api:v1") || !strings.Contains(errs, api.Digest.String()) {
		t.Errorf("pin --verify-key with an image cosign did not sign: exit %d, stderr %s; want 1 naming it", code, errs)
	}
}
