package app

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
)

// recordWire is a registry with one image, an asset tree and a CDN
// serving it, for the record flags that join record to the other pieces.
type recordWire struct {
	reg  *memregistry.Registry
	ref  string
	dir  string // the build's asset tree
	cdn  string // a CDN base serving a copy of it
	base []string
}

func newRecordWire(t *testing.T) *recordWire {
	t.Helper()
	w := &recordWire{reg: memregistry.Start()}
	t.Cleanup(w.reg.Close)
	w.ref = w.reg.Ref("store/web:v1")
	if _, err := memregistry.PushImage(w.ref, 128); err != nil {
		t.Fatal(err)
	}
	w.dir = t.TempDir()
	served := t.TempDir()
	for p, c := range map[string]string{"index.html": "<html>", "assets/app-1a2b.js": "js"} {
		for _, root := range []string{w.dir, served} {
			mustNil(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
			mustNil(t, os.WriteFile(filepath.Join(root, p), []byte(c), 0o644))
		}
	}
	cdn := httptest.NewServer(http.FileServer(http.Dir(served)))
	t.Cleanup(cdn.Close)
	w.cdn = cdn.URL + "/"
	w.base = []string{"record", "--release", "store-web", "--image", "web=" + w.ref, "--assets", w.dir, "--cdn", w.cdn}
	return w
}

func (w *recordWire) args(extra ...string) []string {
	return append(append([]string{}, w.base...), extra...)
}

func TestRecordCheckCDN(t *testing.T) {
	t.Parallel()
	w := newRecordWire(t)
	out := filepath.Join(t.TempDir(), "release.json")
	stdout, stderr, code := lockstepRun(t, "", w.args("--generation", "1", "--check-cdn", "--output", out)...)
	if code != 0 {
		t.Fatalf("record --check-cdn with every asset on the CDN: exit %d\n%s", code, stderr)
	}
	_, raw, err := manifest.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if stdout != manifest.SHA256(raw).String()+"\n" {
		t.Errorf("stdout = %q, want only the digest (the report goes to stderr)", stdout)
	}
	if !strings.Contains(stderr, "2 ok") {
		t.Errorf("stderr lacks the CDN report:\n%s", stderr)
	}

	// The build grows an asset nobody uploaded: refused, nothing written.
	mustNil(t, os.WriteFile(filepath.Join(w.dir, "assets/new-9f8e.js"), []byte("new"), 0o644))
	out2 := filepath.Join(t.TempDir(), "release.json")
	stdout, stderr, code = lockstepRun(t, "", w.args("--generation", "2", "--check-cdn", "--output", out2)...)
	if code != ExitMismatch {
		t.Errorf("record --check-cdn with an asset missing from the CDN: exit %d, want 1\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "assets/new-9f8e.js") || !strings.Contains(stderr, "missing") || stdout != "" {
		t.Errorf("the refusal does not name the missing asset on stderr (stdout %q):\n%s", stdout, stderr)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("a refused record wrote %s (%v)", out2, err)
	}
	// Without --output the manifest is not printed either.
	if stdout, _, code = lockstepRun(t, "", w.args("--generation", "2", "--check-cdn")...); code != ExitMismatch || stdout != "" {
		t.Errorf("record --check-cdn to stdout: exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	if _, _, code = lockstepRun(t, "", w.args("--generation", "2", "--check-cdn-full")...); code != ExitInvalid {
		t.Errorf("--check-cdn-full alone: exit %d, want 2", code)
	}
}

func TestRecordSignKey(t *testing.T) {
	t.Parallel()
	w := newRecordWire(t)
	dir := t.TempDir()
	priv, pub := keyPair(t, dir, "cosign")
	out := filepath.Join(dir, "release.json")
	if _, stderr, code := lockstepRunIn(t, keyEnv, w.args("--generation", "1", "--sign-key", priv, "--output", out)...); code != 0 {
		t.Fatalf("record --sign-key: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := lockstepRunIn(t, keyEnv, "manifest", "verify", "--key", pub, out); code != 0 {
		t.Errorf("manifest verify of what record signed: exit %d\n%s", code, stderr)
	}
	_, otherPub := keyPair(t, dir, "other")
	if _, _, code := lockstepRunIn(t, keyEnv, "manifest", "verify", "--key", otherPub, out); code != ExitMismatch {
		t.Errorf("manifest verify with another key: exit %d, want 1", code)
	}
	for name, args := range map[string][]string{
		"no --output":     {"--generation", "1", "--sign-key", priv},
		"a missing key":   {"--generation", "1", "--sign-key", filepath.Join(dir, "nope.key"), "--output", filepath.Join(dir, "x.json")},
		"--bundle no key": {"--generation", "1", "--bundle", filepath.Join(dir, "b.json"), "--output", filepath.Join(dir, "x.json")},
	} {
		if _, _, code := lockstepRunIn(t, keyEnv, w.args(args...)...); code != ExitInvalid {
			t.Errorf("record --sign-key with %s: exit %d, want 2", name, code)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.json")); !os.IsNotExist(err) {
		t.Errorf("a failed record wrote x.json (%v)", err)
	}
}

func TestRecordGenerationAuto(t *testing.T) {
	t.Parallel()
	w := newRecordWire(t)
	dir := t.TempDir()
	store := "file://" + filepath.Join(dir, "store")
	for g, want := range []string{"1", "2"} {
		out := filepath.Join(dir, "g"+want+".json")
		if _, stderr, code := lockstepRun(t, "", w.args("--generation", "auto", "--store", store, "--output", out)...); code != 0 {
			t.Fatalf("record --generation auto (%d): exit %d\n%s", g, code, stderr)
		}
		m, _, err := manifest.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Release.Generation; strconv.FormatInt(got, 10) != want {
			t.Errorf("generation auto on a store at %d = %d, want %s", g, got, want)
		}
		if _, stderr, code := lockstepRun(t, "", "publish", "--allow-unsigned", "--store", store, out); code != 0 {
			t.Fatalf("publish: exit %d\n%s", code, stderr)
		}
	}
	if _, _, code := lockstepRun(t, "", w.args("--generation", "auto")...); code != ExitInvalid {
		t.Errorf("--generation auto without --store: exit %d, want 2", code)
	}
}

func TestRecordEmbedSignatures(t *testing.T) {
	t.Parallel()
	w := newRecordWire(t)
	dir := t.TempDir()
	sv := sigtest.Key(t)
	pub := filepath.Join(dir, "image.pub")
	mustNil(t, os.WriteFile(pub, sigtest.PublicPEM(t, sv), 0o644))
	out := filepath.Join(dir, "release.json")

	// Unsigned image: refused before anything is written.
	if _, stderr, code := lockstepRun(t, "", w.args("--generation", "1", "--embed-signatures", "--image-key", pub, "--offline", "--output", out)...); code != ExitMismatch {
		t.Errorf("--embed-signatures on an unsigned image: exit %d, want 1\n%s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused record wrote %s (%v)", out, err)
	}

	ref, err := name.ParseReference(w.ref)
	mustNil(t, err)
	desc, err := remote.Head(ref)
	mustNil(t, err)
	sigtest.SignImage(t, ref.Context().Digest(desc.Digest.String()), sv, nil, nil, nil)
	if _, stderr, code := lockstepRun(t, "", w.args("--generation", "1", "--embed-signatures", "--image-key", pub, "--offline", "--output", out)...); code != 0 {
		t.Fatalf("--embed-signatures on a signed image: exit %d\n%s", code, stderr)
	}
	m, _, err := manifest.ReadFile(out)
	mustNil(t, err)
	if m.Verification == nil || len(m.Verification.Signatures) == 0 {
		t.Fatalf("the manifest embeds no signatures: %+v", m.Verification)
	}
	if got := m.Verification.Signatures[0].Digest; got.String() != desc.Digest.String() {
		t.Errorf("the embedded signature is for %s, want the image %s", got, desc.Digest)
	}
	if _, _, code := lockstepRun(t, "", w.args("--generation", "1", "--embed-signatures", "--output", out)...); code != ExitInvalid {
		t.Errorf("--embed-signatures without a signer: exit %d, want 2", code)
	}
}

// What record --sign-key writes, the cosign CLI accepts.
func TestRecordSignKeyCosignInterop(t *testing.T) {
	t.Parallel()
	cosign := sigtest.RequireCosign(t)
	w := newRecordWire(t)
	dir := t.TempDir()
	priv, pub := keyPair(t, dir, "cosign")
	out := filepath.Join(dir, "release.json")
	if _, stderr, code := lockstepRunIn(t, keyEnv, w.args("--generation", "1", "--sign-key", priv, "--output", out)...); code != 0 {
		t.Fatalf("record --sign-key: exit %d\n%s", code, stderr)
	}
	if got, err := cosign.Run(dir, "verify-blob", "--key", pub, "--signature", out+".sig", "--insecure-ignore-tlog", out); err != nil {
		t.Errorf("cosign verify-blob of what record signed: %v\n%s", err, got)
	}
}
