package app

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
)

func writeManifest(t *testing.T, dir string) string {
	t.Helper()
	files := []manifest.File{{Path: "index.html", Size: 5, SHA256: strings.Repeat("b", 64)}}
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "store-web", Generation: 7, CreatedAt: time.Date(2021, 4, 5, 12, 0, 0, 0, time.UTC)},
		Images: []manifest.Image{{
			Name: "web", Ref: "registry.example/store/web:v1", Repository: "registry.example/store/web", Tag: "v1",
			Digest: manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64)), MediaType: "application/vnd.oci.image.manifest.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64",
				Digest: manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64)), Config: manifest.MustParseDigest("sha256:" + strings.Repeat("3", 64))}},
		}},
		Assets: manifest.Assets{CDN: []string{"https://cdn.example/"}, Files: files, Fingerprint: manifest.Fingerprint(files)},
	}
	return writeManifestFile(t, m, filepath.Join(dir, "release.json"))
}

// keyEnv is the environment of a run that signs with a key of keyPair:
// its password.
var keyEnv = []string{"COSIGN_PASSWORD=s3cret"}

// keyPairs are the key pairs keyPair writes, generated once per name for
// the package: encrypting a key costs scrypt's work (about 1.5 CPU-seconds
// under -race), and what the tests need is one key and another.
var keyPairs = struct {
	sync.Mutex
	m map[string]func() (*cosign.KeysBytes, error)
}{m: map[string]func() (*cosign.KeysBytes, error){}}

// keyPair writes the package's cosign key pair of name (keyPairs), as
// dir/name.key, encrypted with keyEnv's password, and dir/name.pub, and
// returns their paths. Pairs of different names differ.
func keyPair(t *testing.T, dir, name string) (priv, pub string) {
	t.Helper()
	keyPairs.Lock()
	gen, ok := keyPairs.m[name]
	if !ok {
		gen = sync.OnceValues(func() (*cosign.KeysBytes, error) {
			return cosign.GenerateKeyPair(func(bool) ([]byte, error) { return []byte("s3cret"), nil })
		})
		keyPairs.m[name] = gen
	}
	keyPairs.Unlock()
	kb, err := gen()
	if err != nil {
		t.Fatal(err)
	}
	priv, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	os.WriteFile(priv, kb.PrivateBytes, 0o600)
	os.WriteFile(pub, kb.PublicBytes, 0o644)
	return priv, pub
}

func TestSignAndVerifyCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := writeManifest(t, dir)
	priv, pub := keyPair(t, dir, "cosign")
	_, otherPub := keyPair(t, dir, "other")

	code, out, errs := runIn(t, keyEnv, "sign", "--key", priv, m)
	if code != 0 || strings.TrimSpace(out) != m+".sig" {
		t.Fatalf("sign = %d, stdout %q, stderr %q; want 0 and the signature's path", code, out, errs)
	}
	if code, out, errs := runIn(t, keyEnv, "manifest", "verify", "--key", pub, m); code != 0 || !strings.HasPrefix(out, "verified ") {
		t.Errorf("manifest verify = %d, %q, %q; want 0, verified", code, out, errs)
	}
	code, out, _ = runIn(t, keyEnv, "manifest", "verify", "--key", pub, "--format", "json", m)
	var res signature.VerifyReport
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !res.Verified || res.Release != "store-web@7" || !strings.HasPrefix(res.Signer, "key SHA256:") {
		t.Errorf("manifest verify --format json = %d, %s (%v)", code, out, err)
	}
	// Flags after the argument, as cosign users type them.
	if code, out, errs := runIn(t, keyEnv, "manifest", "verify", m, "--key", pub, "--format", "json"); code != 0 || !strings.Contains(out, `"verified":true`) {
		t.Errorf("manifest verify FILE --key K --format json = %d, %q, %q; want 0, verified, JSON", code, out, errs)
	}
	if code, out, _ := runIn(t, keyEnv, "manifest", "verify", "--key", otherPub, m); code != ExitMismatch || !strings.Contains(out, "NOT verified") {
		t.Errorf("manifest verify with another key = %d, %q; want 1, NOT verified", code, out)
	}

	// A bundle where asked, verified on its own.
	bundle := filepath.Join(dir, "release.bundle.json")
	if code, _, errs := runIn(t, keyEnv, "sign", "--key", priv, "--output-signature", filepath.Join(dir, "x.sig"), "--bundle", bundle, m); code != 0 {
		t.Fatalf("sign --bundle = %d, %s", code, errs)
	}
	os.Remove(m + ".sig")
	if code, out, errs := runIn(t, keyEnv, "manifest", "verify", "--key", pub, "--bundle", bundle, m); code != 0 {
		t.Errorf("manifest verify --bundle = %d, %q, %q", code, out, errs)
	}
	// A bundle beside the manifest (MANIFEST.sigstore.json) is found.
	os.Rename(bundle, m+".sigstore.json")
	if code, out, errs := runIn(t, keyEnv, "manifest", "verify", "--key", pub, m); code != 0 {
		t.Errorf("manifest verify with the bundle beside = %d, %q, %q", code, out, errs)
	}
	os.Remove(m + ".sigstore.json")
	if code, out, _ := runIn(t, keyEnv, "manifest", "verify", "--key", pub, m); code != ExitMismatch || !strings.Contains(out, "unsigned") {
		t.Errorf("manifest verify of an unsigned manifest = %d, %q; want 1, unsigned", code, out)
	}

	// The manifest changed after signing.
	if code, _, _ := runIn(t, keyEnv, "sign", "--key", priv, m); code != 0 {
		t.Fatal("sign failed")
	}
	raw, _ := os.ReadFile(m)
	os.WriteFile(m, bytes.Replace(raw, []byte(`"generation": 7`), []byte(`"generation": 8`), 1), 0o644)
	if code, out, _ := runIn(t, keyEnv, "manifest", "verify", "--key", pub, m); code != ExitMismatch || !strings.Contains(out, "does not verify") {
		t.Errorf("manifest verify of a changed manifest = %d, %q; want 1", code, out)
	}

	// Usage and input errors are exit 2.
	for _, args := range [][]string{
		{"sign", m},
		{"sign", "--key", priv},
		{"sign", "--key", filepath.Join(dir, "missing.key"), m},
		{"sign", "--key", priv, filepath.Join(dir, "missing.json")},
		{"manifest", "verify", m},
		{"manifest", "verify", "--key", pub, "--certificate-identity", "x", "--certificate-oidc-issuer", "y", m},
		{"manifest", "verify", "--certificate-identity", "x", "--certificate-oidc-issuer", "y", "--offline", m},
		{"manifest", "verify", "--key", pub, filepath.Join(dir, "missing.json")},
	} {
		if code, _, errs := runIn(t, keyEnv, args...); code != ExitInvalid {
			t.Errorf("lockstep %s = %d (%s), want %d", strings.Join(args, " "), code, errs, ExitInvalid)
		}
	}
	if code, _, _ := runIn(t, []string{"COSIGN_PASSWORD=wrong"}, "sign", "--key", priv, m); code != ExitInvalid {
		t.Errorf("sign with a wrong password = %d, want %d", code, ExitInvalid)
	}
}

func TestVerifierFromFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, pub := keyPair(t, dir, "cosign")
	ctxFor := func(args ...string) *cli.Context {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		for _, f := range trustFlags() {
			if err := f.Apply(fs); err != nil {
				t.Fatal(err)
			}
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		c := cli.NewContext(New(), fs, nil)
		c.Context = context.Background()
		return c
	}
	s, err := manifest.FileSource{Path: writeManifest(t, dir)}.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args         []string
		wantErr      bool
		wantInsecure bool
		acceptsBare  bool
	}{
		{nil, true, false, false},
		{[]string{"--insecure-allow-unsigned"}, false, true, true},
		{[]string{"--key", pub}, false, false, false},
		{[]string{"--key", pub, "--insecure-allow-unsigned"}, false, true, true},
		{[]string{"--certificate-identity", "a@b", "--certificate-oidc-issuer", "https://x", "--offline"}, true, false, false},
		{[]string{"--certificate-identity", "a@b", "--offline", "--trusted-root", filepath.Join(dir, "nope.json")}, true, false, false},
	} {
		v, insecure, err := verifierFromFlags(context.Background(), ctxFor(tc.args...))
		if (err != nil) != tc.wantErr || insecure != tc.wantInsecure {
			t.Errorf("verifierFromFlags(%v) = %v, insecure %v; want error %v, insecure %v", tc.args, err, insecure, tc.wantErr, tc.wantInsecure)
			continue
		}
		if err != nil {
			if ExitCode(err) != ExitInvalid {
				t.Errorf("verifierFromFlags(%v) error exits %d, want %d", tc.args, ExitCode(err), ExitInvalid)
			}
			continue
		}
		if got := v.Verify(context.Background(), s) == nil; got != tc.acceptsBare {
			t.Errorf("verifierFromFlags(%v) accepts an unsigned manifest: %v, want %v", tc.args, got, tc.acceptsBare)
		}
	}
}

func writeFileT(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
