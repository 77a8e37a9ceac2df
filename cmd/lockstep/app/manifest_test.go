package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/golden"
	"github.com/lockstep-dev/lockstep/manifest"
)

// lockstepRun runs lockstep with args and returns its stdout, stderr and
// exit code.
func lockstepRun(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := New()
	a.Reader = strings.NewReader(stdin)
	a.Writer, a.ErrWriter = &out, &errOut
	err := a.RunContext(context.Background(), append([]string{"lockstep"}, args...))
	code := Exit(err, &errOut)
	return out.String(), errOut.String(), code
}

// lockstepRunIn is lockstepRun, with nothing on stdin, with env
// ("NAME=value") as the run's own environment (runIn).
func lockstepRunIn(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	code, out, errs := runIn(t, env, args...)
	return out, errs, code
}

func TestManifestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		golden string
		args   []string
		code   int
	}{
		{"show.json.golden", []string{"manifest", "show", "--format", "json", "testdata/v1.json"}, 0},
		{"show.txt.golden", []string{"manifest", "show", "--files", "testdata/v1.json"}, 0},
		{"show.md.golden", []string{"manifest", "show", "--format", "markdown", "testdata/v2.json"}, 0},
		{"diff.json.golden", []string{"manifest", "diff", "--format", "json", "testdata/v1.json", "testdata/v2.json"}, 1},
		{"diff.txt.golden", []string{"manifest", "diff", "testdata/v1.json", "testdata/v2.json"}, 1},
		{"diff-allowed.txt.golden", []string{"manifest", "diff", "--allow-moved-tag", "web", "testdata/v1.json", "testdata/v2.json"}, 0},
		{"diff-backwards.json.golden", []string{"manifest", "diff", "--format", "json", "testdata/v2.json", "testdata/v1.json"}, 1},
		{"diff.md.golden", []string{"manifest", "diff", "--format", "markdown", "testdata/v1.json", "testdata/v2.json"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, errOut, code := lockstepRun(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("lockstep %s: exit %d, want %d\n%s", strings.Join(tt.args, " "), code, tt.code, errOut)
			}
			golden.Check(t, tt.golden, out)
			if strings.HasSuffix(tt.golden, ".json.golden") && !json.Valid([]byte(out)) {
				t.Errorf("lockstep %s: stdout is not JSON", strings.Join(tt.args, " "))
			}
		})
	}
}

func TestManifestDiffExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"the same manifest", []string{"testdata/v1.json", "testdata/v1.json"}, 1, "generation 1 does not rise above generation 1"},
		{"a moved tag", []string{"testdata/v1.json", "testdata/v2.json"}, 1, "tag registry.example/store/web:v1 moved"},
		{"a moved tag allowed", []string{"--allow-moved-tag", "web", "testdata/v1.json", "testdata/v2.json"}, 0, ""},
		{"allowed, but --exit-code and changes", []string{"--allow-moved-tag", "web", "--exit-code", "testdata/v1.json", "testdata/v2.json"}, 1, ""},
		{"backwards", []string{"--allow-moved-tag", "web", "testdata/v2.json", "testdata/v1.json"}, 1, "does not rise"},
		{"a missing file", []string{"testdata/v1.json", "testdata/nope.json"}, 2, "nope.json"},
		{"one argument", []string{"testdata/v1.json"}, 2, "want OLD NEW"},
		{"a bad format", []string{"--format", "yaml", "testdata/v1.json", "testdata/v2.json"}, 2, "--format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := lockstepRun(t, "", append([]string{"manifest", "diff"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.err) {
				t.Errorf("manifest diff %v: exit %d, stderr %q; want exit %d, stderr containing %q", tt.args, code, errOut, tt.code, tt.err)
			}
		})
	}
}

func TestManifestValidate(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile("testdata/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), `"path": "index.html"`, `"path": "../index.html"`, 1)
	dir := t.TempDir()
	badPath := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badPath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := lockstepRun(t, "", "manifest", "validate", "testdata/v1.json")
	if code != 0 || !strings.Contains(out, "valid: store-web@1, sha256:") {
		t.Errorf("validate v1.json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = lockstepRun(t, "", "manifest", "validate", badPath)
	if code != 2 || !strings.Contains(errOut, "assets.files[2].path") || out != "" {
		t.Errorf("validate bad.json: exit %d, stdout %q, stderr %q; want exit 2 naming assets.files[2].path", code, out, errOut)
	}
	out, _, code = lockstepRun(t, "", "manifest", "validate", "--format", "json", badPath)
	var v validateReport
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 2 || v.Valid || v.Field != "assets.files[2].path" {
		t.Errorf("validate --format json bad.json: exit %d, %+v (%v)", code, v, err)
	}
	out, _, code = lockstepRun(t, bad, "manifest", "validate", "-")
	if code != 2 || out != "" {
		t.Errorf("validate - (stdin): exit %d, stdout %q, want 2", code, out)
	}
	_, errOut, code = lockstepRun(t, "", "manifest", "validate", filepath.Join(dir, "missing.json"))
	if code != 2 {
		t.Errorf("validate missing.json: exit %d (%s), want 2", code, errOut)
	}
}

func TestManifestDigest(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	indented, _, code := lockstepRun(t, "", "manifest", "digest", "testdata/v1.json")
	if code != 0 || !strings.HasPrefix(indented, "sha256:") {
		t.Fatalf("manifest digest: exit %d, %q", code, indented)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatal(err)
	}
	fromStdin, _, _ := lockstepRun(t, compact.String(), "manifest", "digest", "-")
	if fromStdin != indented {
		t.Errorf("the digest depends on the formatting: %q (compact) != %q (indented)", fromStdin, indented)
	}
	show, _, _ := lockstepRun(t, "", "manifest", "show", "--format", "json", "testdata/v1.json")
	var s manifest.Description
	if err := json.Unmarshal([]byte(show), &s); err != nil || s.Digest.String()+"\n" != indented {
		t.Errorf("show's digest %s != digest's %s (%v)", s.Digest, indented, err)
	}
}
