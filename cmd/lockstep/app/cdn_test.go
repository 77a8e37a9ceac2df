package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// runCDN runs the lockstep CLI and returns its stdout, stderr and exit code.
func runCDN(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	code, out, errw := run(t, args...)
	return out, errw, code
}

// cdnManifest writes a manifest whose assets are served (or not) by srv.
func cdnManifest(t *testing.T, cdn, origin string, files map[string]string) string {
	t.Helper()
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion,
		Kind:       manifest.Kind,
		Release:    manifest.Release{Name: "store-web", Generation: 1, CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		Assets:     manifest.Assets{CDN: []string{cdn}, Origin: origin},
	}
	for _, p := range []string{"app-B4TPZJfM.js", "gone.js", "robots.txt", "style-Cu73fR1L.css"} {
		b, ok := files[p]
		if !ok {
			continue
		}
		m.Assets.Files = append(m.Assets.Files, manifest.File{Path: p, Size: int64(len(b)), SHA256: manifest.SHA256([]byte(b)).Hex})
	}
	m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
	return writeManifestFile(t, m, filepath.Join(t.TempDir(), "manifest.json"))
}

func TestCDNCheck(t *testing.T) {
	t.Parallel()
	// Hashed names, as a bundler writes them: the CDN states no checksum,
	// so they are compared by size; robots.txt has no hash in its name and
	// is compared by its bytes.
	served := map[string]string{"app-B4TPZJfM.js": "console.log(1)\n", "style-Cu73fR1L.css": "body{}\n", "robots.txt": "User-agent: X\n"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := served[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(b))
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer dead.Close()

	good := cdnManifest(t, srv.URL, "", map[string]string{"app-B4TPZJfM.js": served["app-B4TPZJfM.js"], "style-Cu73fR1L.css": served["style-Cu73fR1L.css"]})
	withMissing := cdnManifest(t, srv.URL, "", map[string]string{"app-B4TPZJfM.js": served["app-B4TPZJfM.js"], "gone.js": "x"})
	withPublic := cdnManifest(t, srv.URL, "", map[string]string{"app-B4TPZJfM.js": served["app-B4TPZJfM.js"], "robots.txt": served["robots.txt"]})
	// The CDN serves another robots.txt of the same size.
	publicChanged := cdnManifest(t, srv.URL, "", map[string]string{"app-B4TPZJfM.js": served["app-B4TPZJfM.js"], "robots.txt": "User-agent: *\n"})
	selfOrigin := cdnManifest(t, srv.URL, srv.URL, served)
	down := cdnManifest(t, dead.URL, "", map[string]string{"app-B4TPZJfM.js": served["app-B4TPZJfM.js"], "style-Cu73fR1L.css": served["style-Cu73fR1L.css"]})
	// cdn check parses a local file alone (no digest, no signature files),
	// as strictly as every other reader: a duplicate key, a document that
	// is not a manifest and a manifest of another release are refused.
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dupKey := filepath.Join(t.TempDir(), "dup.json")
	if err := os.WriteFile(dupKey, bytes.Replace(raw, []byte(`{`), []byte(`{"kind":"ReleaseManifest",`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(t.TempDir(), "not.json")
	if err := os.WriteFile(notJSON, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// A signature file that cannot be read (a directory) is no concern of
	// a check that reads no signature.
	if err := os.Mkdir(good+manifest.SignatureSuffix, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"all present", []string{"cdn", "check", "--manifest", good}, 0, "ok: checked 2 (2 files × 1 base): 2 ok", ""},
		{"json", []string{"cdn", "check", "--manifest", good, "--format", "json"}, 0, `"ok": 2`, ""},
		{"markdown", []string{"cdn", "check", "--manifest", withMissing, "--format", "markdown"}, 1, "| `missing` | `gone.js` |", "asset gone.js"},
		{"sarif", []string{"cdn", "check", "--manifest", withMissing, "--format", "sarif"}, 1, `"ruleId": "cdn/missing"`, ""},
		{"missing", []string{"cdn", "check", "--manifest", withMissing}, 1, "missing  gone.js", "403 Forbidden"},
		{"full", []string{"cdn", "check", "--manifest", good, "--full", "--sample", "1", "--seed", "7"}, 0, "checked 1 (1 files", ""},
		// The CDN states no checksum: the report says only sizes were compared.
		{"size only", []string{"cdn", "check", "--manifest", good}, 0, "compared 0 by bytes, 0 by checksum header, 2 by size only", ""},
		{"size only json", []string{"cdn", "check", "--manifest", good, "--format", "json"}, 0, `"compared": "size"`, ""},
		// A name without a content hash is compared by its bytes.
		{"public file by bytes", []string{"cdn", "check", "--manifest", withPublic}, 0, "compared 1 by bytes, 0 by checksum header, 1 by size only", ""},
		{"public file changed, same size", []string{"cdn", "check", "--manifest", publicChanged}, 1, "wrong-content  robots.txt", "asset robots.txt"},
		{"require content", []string{"cdn", "check", "--manifest", good, "--require-content"}, 3, "size-only", "compared the size only"},
		{"require content, full", []string{"cdn", "check", "--manifest", good, "--require-content", "--full"}, 0, "2 by bytes", ""},
		{"origin is the CDN", []string{"cdn", "check", "--manifest", selfOrigin}, 2, "", "is the CDN"},
		{"origin flag", []string{"cdn", "check", "--manifest", good, "--origin", srv.URL + "/"}, 2, "", "is the CDN"},
		{"origin elsewhere", []string{"cdn", "check", "--manifest", good, "--origin", dead.URL}, 0, "2 ok", ""},
		{"CDN down", []string{"cdn", "check", "--manifest", down, "--timeout", "1s"}, 3, "NOT VERIFIED", "CDN unavailable"},
		{"release bound", []string{"cdn", "check", "--manifest", good, "--release", "store-web"}, 0, "2 ok", ""},
		{"another release", []string{"cdn", "check", "--manifest", good, "--release", "store-api"}, 1, "", "manifest-wrong-release"},
		{"duplicate key", []string{"cdn", "check", "--manifest", dupKey}, 2, "", "duplicate"},
		{"truncated manifest", []string{"cdn", "check", "--manifest", notJSON}, 2, "", "--manifest"},
		{"no manifest", []string{"cdn", "check"}, 2, "", "a manifest is required"},
		{"manifest file missing", []string{"cdn", "check", "--manifest", filepath.Join(t.TempDir(), "none.json")}, 2, "", "none.json"},
		{"bad format", []string{"cdn", "check", "--manifest", good, "--format", "xml"}, 2, "", "--format"},
		{"bad sample", []string{"cdn", "check", "--manifest", good, "--sample", "-1"}, 2, "", "--sample"},
		{"bad concurrency", []string{"cdn", "check", "--manifest", good, "--concurrency", "0"}, 2, "", "--concurrency"},
		{"argument", []string{"cdn", "check", "--manifest", good, "extra"}, 2, "", "no arguments"},
	} {
		out, errw, code := runCDN(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errw, tc.stderr) {
			t.Errorf("%s: exit %d, want %d\nstdout (want %q):\n%s\nstderr (want %q):\n%s", tc.name, code, tc.code, tc.stdout, out, tc.stderr, errw)
		}
	}
	out, _, _ := runCDN(t, "cdn", "check", "--manifest", withMissing, "--format", "json")
	var rep struct {
		Results []struct{ Path, Status string }
		Summary struct{ Checked, Missing int }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Summary.Checked != 2 || rep.Summary.Missing != 1 {
		t.Errorf("json: %v, %+v", err, rep)
	}
}
