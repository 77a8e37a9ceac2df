package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/manifest"
)

// The pipeline as a user runs it: record and sign, publish, roll back
// signed, and fetch the current manifest from the store, verified.
func TestRollbackSignedAndManifestGet(t *testing.T) {
	t.Parallel()
	w := newRecordWire(t)
	dir := t.TempDir()
	priv, pub := keyPair(t, dir, "cosign")
	_, otherPub := keyPair(t, dir, "other")
	url := "file://" + filepath.Join(dir, "store")
	for _, g := range []string{"1", "2"} {
		out := filepath.Join(dir, "g"+g+".json")
		if _, stderr, code := lockstepRunIn(t, keyEnv, w.args("--generation", g, "--sign-key", priv, "--output", out)...); code != 0 {
			t.Fatalf("record g%s: exit %d\n%s", g, code, stderr)
		}
		if _, stderr, code := lockstepRunIn(t, keyEnv, "publish", "--store", url, out); code != 0 {
			t.Fatalf("publish of a signed manifest g%s: exit %d\n%s", g, code, stderr)
		}
	}

	// The incident: back to generation 1, signed, as generation 3.
	rb := filepath.Join(dir, "rollback.json")
	stdout, stderr, code := lockstepRunIn(t, keyEnv, "rollback", "--store", url, "--release", "store-web", "--to", "1",
		"--sign-key", priv, "--output", rb, "--format", "json")
	if code != 0 {
		t.Fatalf("rollback --sign-key: exit %d\n%s", code, stderr)
	}
	var res storeRollbackJSON
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.Signed || !res.Published || res.Generation != 3 {
		t.Fatalf("rollback = %+v (%v), want generation 3, published, signed", res, err)
	}
	if strings.Contains(stderr, "unsigned") {
		t.Errorf("a signed rollback warns that it is unsigned:\n%s", stderr)
	}
	if _, stderr, code := lockstepRunIn(t, keyEnv, "manifest", "verify", "--key", pub, rb); code != 0 {
		t.Errorf("manifest verify of rollback --output: exit %d\n%s", code, stderr)
	}

	// manifest get writes what the channel names, with its signature,
	// verified; a consumer's verify then passes on the written files.
	got := filepath.Join(dir, "current.json")
	stdout, stderr, code = lockstepRunIn(t, keyEnv, "manifest", "get", "--store", url, "--release", "store-web", "--key", pub, "--output", got)
	if code != 0 || strings.TrimSpace(stdout) != res.Digest.String() {
		t.Fatalf("manifest get: exit %d, stdout %q, want %s\n%s", code, stdout, res.Digest, stderr)
	}
	m, _, err := manifest.ReadFile(got)
	if err != nil || m.Release.Generation != 3 {
		t.Fatalf("manifest get wrote %+v (%v), want generation 3", m, err)
	}
	if _, err := os.Stat(got + manifest.SignatureSuffix); err != nil {
		t.Errorf("manifest get wrote no signature: %v", err)
	}
	if _, stderr, code := lockstepRunIn(t, keyEnv, "manifest", "verify", "--key", pub, got); code != 0 {
		t.Errorf("manifest verify of what manifest get wrote: exit %d\n%s", code, stderr)
	}
	// To stdout: the exact bytes.
	stdout, _, code = lockstepRunIn(t, keyEnv, "manifest", "get", "--store", url, "--release", "store-web", "--key", pub)
	if b, _ := os.ReadFile(got); code != 0 || stdout != string(b) {
		t.Errorf("manifest get to stdout: exit %d, %d bytes, want the %d written", code, len(stdout), len(b))
	}
	// Another signer: refused (1), nothing written.
	other := filepath.Join(dir, "other.json")
	if _, stderr, code := lockstepRunIn(t, keyEnv, "manifest", "get", "--store", url, "--release", "store-web", "--key", otherPub, "--output", other); code != ExitMismatch {
		t.Errorf("manifest get with another key: exit %d, want 1\n%s", code, stderr)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a refused manifest get wrote %s (%v)", other, err)
	}
	for name, args := range map[string][]string{
		"no signer":     {"manifest", "get", "--store", url, "--release", "store-web"},
		"a stray arg":   {"manifest", "get", "--store", url, "--release", "store-web", "--key", pub, "x"},
		"no --release":  {"manifest", "get", "--store", url, "--key", pub},
		"sign-key+kl":   {"rollback", "--store", url, "--release", "store-web", "--to", "1", "--sign-key", priv, "--keyless"},
		"a missing key": {"rollback", "--store", url, "--release", "store-web", "--to", "1", "--sign-key", filepath.Join(dir, "nope.key")},
	} {
		if _, stderr, code := lockstepRunIn(t, keyEnv, args...); code != ExitInvalid {
			t.Errorf("%s: exit %d, want 2\n%s", name, code, stderr)
		}
	}
	// A release the store does not hold: exit 3, as in every command
	// that reads a channel (TestMissingRelease), naming what it holds.
	if _, stderr, code := lockstepRunIn(t, keyEnv, "manifest", "get", "--store", url, "--release", "store-api", "--key", pub); code != ExitUnverified || !strings.Contains(stderr, "which holds store-web") {
		t.Errorf("no such release: exit %d, want 3 naming store-web\n%s", code, stderr)
	}
	// Nothing of the refused rollbacks moved the channel.
	if stdout, _, _ := lockstepRunIn(t, keyEnv, "status", "--store", url, "--release", "store-web"); !strings.Contains(stdout, "generation  3") || !strings.Contains(stdout, "signed      yes") {
		t.Errorf("status after the refused rollbacks:\n%s", stdout)
	}
}

// record --previous refuses a tag that moved since the previous release,
// read from a file or from the store, unless --allow-moved-tag names it.
func TestRecordPrevious(t *testing.T) {
	t.Parallel()
	w := newRecordWire(t)
	dir := t.TempDir()
	url := "file://" + filepath.Join(dir, "store")
	g1 := filepath.Join(dir, "g1.json")
	if _, stderr, code := lockstepRun(t, "", w.args("--generation", "1", "--previous", "store", "--store", url, "--output", g1)...); code != 0 {
		t.Fatalf("record --previous store on an empty store: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := lockstepRun(t, "", "publish", "--allow-unsigned", "--store", url, g1); code != 0 {
		t.Fatalf("publish: exit %d\n%s", code, stderr)
	}
	// Someone re-pushes store/web:v1.
	if _, err := memregistry.PushImage(w.ref, 256); err != nil {
		t.Fatal(err)
	}
	for _, prev := range []string{g1, "store"} {
		out := filepath.Join(dir, "g2.json")
		_, stderr, code := lockstepRun(t, "", w.args("--generation", "2", "--previous", prev, "--store", url, "--output", out)...)
		if code != ExitMismatch || !strings.Contains(stderr, "moved") || !strings.Contains(stderr, "store/web:v1") {
			t.Errorf("record --previous %s after the tag moved: exit %d, want 1 naming the tag\n%s", prev, code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("a refused record wrote %s (%v)", out, err)
		}
		_, stderr, code = lockstepRun(t, "", w.args("--generation", "2", "--previous", prev, "--store", url, "--allow-moved-tag", "web", "--output", out)...)
		if code != 0 || !strings.Contains(stderr, "tag moved, allowed") {
			t.Errorf("record --previous %s --allow-moved-tag web: exit %d, want 0 with a warning\n%s", prev, code, stderr)
		}
		os.Remove(out)
	}
	for name, args := range map[string][]string{
		"store without --store": w.args("--generation", "2", "--previous", "store"),
		"a missing file":        w.args("--generation", "2", "--previous", filepath.Join(dir, "nope.json")),
		"allow without prev":    w.args("--generation", "2", "--allow-moved-tag", "web"),
	} {
		if _, stderr, code := lockstepRun(t, "", args...); code != ExitInvalid {
			t.Errorf("record with %s: exit %d, want 2\n%s", name, code, stderr)
		}
	}
}

// record --asset-list records the files under --assets that the list does
// not name (the CDN serves them too), naming them on stderr, or with
// --unlisted refuse refuses by name and writes nothing.
func TestRecordUnlisted(t *testing.T) {
	t.Parallel()
	w := newRecordWire(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "manifest.json")
	mustNil(t, os.WriteFile(list, []byte(`{"src/main.js": {"file": "assets/app-1a2b.js", "isEntry": true}}`), 0o644))
	mustNil(t, os.WriteFile(filepath.Join(w.dir, "favicon.ico"), []byte("ico"), 0o644))
	out := filepath.Join(dir, "release.json")
	_, stderr, code := lockstepRun(t, "", w.args("--generation", "1", "--asset-list", list, "--output", out)...)
	if code != 0 || !strings.Contains(stderr, "favicon.ico") || !strings.Contains(stderr, "asset lists do not name") {
		t.Fatalf("record --asset-list: exit %d, want 0 naming favicon.ico\n%s", code, stderr)
	}
	m, _, err := manifest.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m.Assets.Files {
		got = append(got, f.Path)
	}
	if strings.Join(got, " ") != "assets/app-1a2b.js favicon.ico index.html" {
		t.Errorf("recorded %q, want the listed file and the two it does not name", got)
	}
	refused := filepath.Join(dir, "refused.json")
	_, stderr, code = lockstepRun(t, "", w.args("--generation", "1", "--asset-list", list, "--unlisted", "refuse", "--output", refused)...)
	if code != ExitInvalid || !strings.Contains(stderr, "favicon.ico, index.html") {
		t.Errorf("record --unlisted refuse: exit %d, want 2 naming favicon.ico and index.html\n%s", code, stderr)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Errorf("a refused record wrote %s (%v)", refused, err)
	}
	if _, _, code := lockstepRun(t, "", w.args("--generation", "1", "--asset-list", list, "--unlisted", "drop")...); code != ExitInvalid {
		t.Errorf("--unlisted drop: exit %d, want 2", code)
	}
}

// record --asset-list on the real webpack build: without --public-path the
// lists' /static/ entries are not in --assets, and the error says to try
// --public-path /static/; with it and --exclude '*.map', the maps the lists
// name are left out and the log never calls a recorded file excluded.
func TestRecordWebpackLists(t *testing.T) {
	t.Parallel()
	w := newRecordWire(t)
	dist := filepath.Join("..", "..", "..", "testdata", "web", "webpack", "dist")
	base := []string{"record", "--release", "store-web", "--generation", "1", "--image", "web=" + w.ref, "--assets", dist,
		"--cdn", "https://cdn.example/static/", "--asset-list", filepath.Join(dist, "asset-manifest.json")}
	_, stderr, code := lockstepRun(t, "", base...)
	if code != ExitInvalid || !strings.Contains(stderr, "try --public-path /static/") {
		t.Errorf("record without --public-path: exit %d, want 2 suggesting --public-path /static/\n%s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "release.json")
	_, stderr, code = lockstepRun(t, "", append(base, "--public-path", "/static/", "--exclude", "*.map", "--output", out)...)
	if code != 0 {
		t.Fatalf("record --public-path /static/ --exclude '*.map': exit %d\n%s", code, stderr)
	}
	m, _, err := manifest.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var excludedLine string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "excluded") {
			excludedLine += l
		}
	}
	words := strings.FieldsFunc(excludedLine, func(r rune) bool { return r == ' ' || r == '"' || r == '=' })
	for _, f := range m.Assets.Files {
		if strings.HasSuffix(f.Path, ".map") {
			t.Errorf("recorded %s, excluded by *.map", f.Path)
		}
		if slices.Contains(words, f.Path) {
			t.Errorf("the log calls the recorded %s excluded: %s", f.Path, excludedLine)
		}
	}
	if !slices.Contains(words, "js/main.8fce7357.js.map") || m.APIVersion != manifest.APIVersionV2 {
		t.Errorf("want the maps named as excluded and a v2 manifest (%s)\n%s", m.APIVersion, stderr)
	}
}
