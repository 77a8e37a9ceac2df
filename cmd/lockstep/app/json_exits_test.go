package app_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// oneJSON reports whether out is exactly one JSON document (and nothing
// but white space after it), and decodes it into v.
func oneJSON(out string, v any) bool {
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(v); err != nil {
		return false
	}
	var rest json.RawMessage
	return dec.Decode(&rest) != nil && strings.TrimSpace(out[dec.InputOffset():]) == ""
}

// TestJSONEveryExit: with --format json, every exit of a command prints
// one JSON document on stdout: its report for 0 (and the boot gate's
// decision for 1 and 3), else a JSON error object whose exitCode is the
// exit code. record, manifest get and manifest digest take --format too,
// and their reports name what was recorded and written.
func TestJSONEveryExit(t *testing.T) {
	t.Parallel()
	e := newAdmitEnv(t)
	dir := t.TempDir()
	live := filepath.Join(dir, "live")
	g7 := e.manifest(t, 7)
	if code, out, errs := run(t, "publish", "--allow-unsigned", "--store", live, g7); code != 0 {
		t.Fatalf("publish: exit %d\n%s\n%s", code, out, errs)
	}
	site := t.TempDir()
	writeFile(t, filepath.Join(site, "app.js"), "console.log(1)")
	emptyCDN := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(emptyCDN.Close)
	out := filepath.Join(dir, "rec.json")
	for _, tc := range []struct {
		name string
		args []string
		code int
		// has are fields the document must hold (a JSON error's kind for
		// exits that print no report).
		has []string
	}{
		{"record to a file", []string{"record", "--release", "web", "--generation", "3", "--assets", site, "--cdn", "https://cdn.example.test/", "-o", out},
			0, []string{`"generation": 3`, `"manifest": "` + out + `"`, `"digest": "sha256:`}},
		{"record to stdout", []string{"record", "--release", "web", "--generation", "3", "--assets", site, "--cdn", "https://cdn.example.test/"},
			0, []string{`"generation": 3`, `"manifest": {`}},
		{"record refused by the CDN", []string{"record", "--release", "web", "--generation", "3", "--assets", site, "--cdn", emptyCDN.URL + "/", "--check-cdn"},
			1, []string{`"kind":"refused"`, `"exitCode":1`}},
		{"record without --generation", []string{"record", "--release", "web", "--assets", site, "--cdn", "https://cdn.example.test/"},
			2, []string{`"kind":"usage"`}},
		{"manifest digest", []string{"manifest", "digest", g7}, 0, []string{`"release": "store-web"`, `"generation": 7`, `"digest": "sha256:`}},
		{"manifest digest of no manifest", []string{"manifest", "digest", filepath.Join(dir, "none.json")}, 2, []string{`"kind":"usage"`}},
		{"manifest get", []string{"manifest", "get", "--insecure-allow-unsigned", "--store", live, "--release", "store-web"},
			0, []string{`"channel": "production"`, `"generation": 7`, `"manifest": {`}},
		{"manifest get to a file", []string{"manifest", "get", "--insecure-allow-unsigned", "--store", live, "--release", "store-web", "-o", filepath.Join(dir, "got.json")},
			0, []string{`"manifest": "` + filepath.Join(dir, "got.json") + `"`}},
		{"manifest get of no release", []string{"manifest", "get", "--insecure-allow-unsigned", "--store", live, "--release", "nope"},
			3, []string{`"kind":"unverified"`, "which holds store-web"}},
		{"publish", []string{"publish", "--allow-unsigned", "--store", live, e.manifest(t, 8)}, 0, []string{`"generation": 8`}},
		{"publish of a stale generation", []string{"publish", "--allow-unsigned", "--store", live, e.manifest(t, 5)},
			1, []string{`"kind":"refused"`, `"exitCode":1`}},
		{"publish unsigned", []string{"publish", "--store", live, e.manifest(t, 9)}, 2, []string{`"kind":"usage"`}},
		{"status", []string{"status", "--store", live, "--release", "store-web"}, 0, []string{`"generation": 8`}},
		{"status of no release", []string{"status", "--store", live, "--release", "nope"}, 3, []string{`"kind":"unverified"`}},
	} {
		code, stdout, errs := run(t, append(tc.args, "--format", "json")...)
		var doc any
		if code != tc.code || !oneJSON(stdout, &doc) {
			t.Errorf("%s: exit %d, stdout one JSON document: %v; want exit %d and one\nstdout: %s\nstderr: %s", tc.name, code, oneJSON(stdout, &doc), tc.code, stdout, errs)
			continue
		}
		// A JSON error object is matched compacted, a report as printed.
		text := stdout
		var b bytes.Buffer
		if strings.Contains(tc.has[0], `":"`) && json.Compact(&b, []byte(stdout)) == nil {
			text = b.String()
		}
		for _, h := range tc.has {
			if !strings.Contains(text, h) {
				t.Errorf("%s: stdout does not hold %s\n%s", tc.name, h, stdout)
			}
		}
	}
}
