package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

func TestRecord(t *testing.T) {
	t.Parallel()
	reg := memregistry.Start()
	defer reg.Close()
	if _, err := memregistry.PushImage(reg.Ref("store/web:v1"), 128); err != nil {
		t.Fatal(err)
	}
	if _, err := memregistry.PushIndex(reg.Ref("store/api:v1"), "linux/amd64", "linux/arm64"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for p, c := range map[string]string{"index.html": "<html>", "assets/app.js": "js", ".vite/manifest.json": `{"index.html": {"file": "assets/app.js"}}`} {
		mustNil(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		mustNil(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	// A GitHub Actions run, as the run's own environment.
	env := []string{"GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/store", "GITHUB_SHA=abc", "GITHUB_RUN_ID=9", "GITHUB_REF=", "GITHUB_RUN_ATTEMPT=", "GITHUB_SERVER_URL="}
	base := []string{"record", "--release", "store-web", "--generation", "4", "--image", "web=" + reg.Ref("store/web:v1"),
		"--image", "api=" + reg.Ref("store/api:v1"), "--assets", dir, "--cdn", "https://cdn.example/store/"}

	out, errOut, code := lockstepRunIn(t, env, base...)
	if code != 0 {
		t.Fatalf("record: exit %d: %s", code, errOut)
	}
	m, err := manifest.Parse([]byte(out))
	if err != nil {
		t.Fatalf("record wrote a manifest that does not parse: %v\n%s", err, out)
	}
	if len(m.Images) != 2 || len(m.Assets.Files) != 3 || m.Release.Source == nil || m.Release.Source.WorkflowRunURL != "https://github.com/acme/store/actions/runs/9" {
		t.Errorf("record: %d images, %d files, source %+v; want 2, 3 (hidden files too) and the Actions run", len(m.Images), len(m.Assets.Files), m.Release.Source)
	}
	if d, _ := m.Digest(); manifest.SHA256([]byte(out)) != d {
		t.Errorf("stdout is not the canonical encoding: sha256 %s, digest %s", manifest.SHA256([]byte(out)), d)
	}

	outFile := filepath.Join(t.TempDir(), "m.json")
	out, errOut, code = lockstepRunIn(t, env, append(base, "--asset-list", filepath.Join(dir, ".vite/manifest.json"), "--source-commit", "def", "--output", outFile)...)
	if code != 0 {
		t.Fatalf("record --output: exit %d: %s", code, errOut)
	}
	m, raw, err := manifest.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if d := manifest.SHA256(raw); out != d.String()+"\n" {
		t.Errorf("record --output printed %q, want the digest %s", out, d)
	}
	// The list names assets/app.js; index.html, which it does not name, is
	// served all the same, so it is recorded; the list itself is not.
	if len(m.Assets.Files) != 2 || m.Assets.Files[0].Path != "assets/app.js" || m.Assets.Files[1].Path != "index.html" || m.Release.Source.Commit != "def" || m.Release.Source.Repository != "https://github.com/acme/store" {
		t.Errorf("record --asset-list --source-commit: files %+v, source %+v", m.Assets.Files, m.Release.Source)
	}

	// Failures exit with their code and leave the output file as it was.
	downHost := testenv.RefusedAddr(t)
	before, _ := os.ReadFile(outFile)
	mustNil(t, os.Symlink("/etc/hostname", filepath.Join(dir, "escape")))
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"a symlink out of the assets", base, 2, "leaves the asset directory"},
		{"a registry that is down", []string{"record", "--release", "r", "--generation", "1", "--image", "web=" + downHost + "/store/web:v1"}, 3, "pinning image web"},
		{"generation 0", []string{"record", "--release", "r", "--generation", "0", "--image", "web=" + reg.Ref("store/web:v1")}, 2, "--generation"},
		{"generation auto is not yet", []string{"record", "--release", "r", "--generation", "auto", "--image", "web=" + reg.Ref("store/web:v1")}, 2, "--generation"},
		{"an image without a name", []string{"record", "--release", "r", "--generation", "1", "--image", reg.Ref("store/web:v1")}, 2, "NAME=REF"},
		{"no release", []string{"record", "--generation", "1", "--image", "web=x"}, 2, "release"},
		{"a list without a directory", []string{"record", "--release", "r", "--generation", "1", "--asset-list", "x.json"}, 2, "--asset-list needs --assets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := lockstepRunIn(t, env, append(tt.args, "--output", outFile)...)
			if code != tt.code || !strings.Contains(errOut, tt.err) {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr containing %q", code, errOut, tt.code, tt.err)
			}
			if out != "" {
				t.Errorf("stdout %q on failure, want nothing", out)
			}
			if after, _ := os.ReadFile(outFile); string(after) != string(before) {
				t.Errorf("a failed record changed %s", outFile)
			}
			if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(outFile), ".*tmp*")); len(tmp) > 0 {
				t.Errorf("a failed record left %v", tmp)
			}
		})
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecordRealRegistry records against Debian's docker-registry
// (distribution) on loopback: an image and a multi-arch index, the index
// also by digest.
func TestRecordRealRegistry(t *testing.T) {
	t.Parallel()
	host := testenv.Registry(t)
	web, err := memregistry.PushImage(host+"/store/web:v1", 512)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := memregistry.PushIndex(host+"/store/api:v1", "linux/amd64", "linux/arm64/v8")
	if err != nil {
		t.Fatal(err)
	}
	idxDigest, _ := idx.Digest()
	out, errOut, code := lockstepRun(t, "", "record", "--release", "store", "--generation", "1",
		"--image", "web="+host+"/store/web:v1", "--image", "api="+host+"/store/api:v1",
		"--image", "apipinned="+host+"/store/api@"+idxDigest.String())
	if code != 0 {
		t.Fatalf("record: exit %d: %s", code, errOut)
	}
	m, err := manifest.Parse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := web.Digest()
	api, _ := m.Image("api")
	pinned, _ := m.Image("apipinned")
	w, _ := m.Image("web")
	if w.Digest.String() != wd.String() || api.Digest.String() != idxDigest.String() || len(api.Platforms) != 2 ||
		pinned.Digest != api.Digest || len(pinned.Platforms) != 2 || pinned.Platforms[1].Config != api.Platforms[1].Config {
		t.Errorf("record against docker-registry: web %s (want %s), api %s with %d platforms, api by digest %s with %d platforms",
			w.Digest, wd, api.Digest, len(api.Platforms), pinned.Digest, len(pinned.Platforms))
	}
}
