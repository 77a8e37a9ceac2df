package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets/graph"
)

// The real Vite build (testdata/web/vite-react) deployed as a server's
// backend integration: the server renders its pages and their tags from
// .vite/manifest.json, so the build ships no HTML the gate could start
// from. Its entries: the modern index chunk and its stylesheet, and the
// legacy chunk and polyfills that only old browsers are sent.
const (
	viteEntryJS     = "assets/index-B4TPZJfM.js"
	viteEntryCSS    = "assets/index-Cu73fR1L.css"
	viteLegacyEntry = "assets/index-legacy-BJUse8hi.js"
	vitePolyfills   = "assets/polyfills-legacy-CLIumKav.js"
	viteLegacyLazy  = "assets/Report-legacy-0tHd6NjH.js"
)

// entriesEnv is that deployment: the build (HTML left out) on a real
// nginx CDN, a real nginx instance serving the page its server renders
// (the modern entry's tags only) and the build's list, and the manifest
// record wrote for it with the release's image added.
type entriesEnv struct {
	build, cdn, cdnDir, inst, instDir, manifest string
	report                                      graph.Result
	probe                                       probeAttackEnv
}

func newEntriesEnv(t *testing.T) entriesEnv {
	t.Helper()
	e := entriesEnv{build: t.TempDir(), cdnDir: t.TempDir(), instDir: t.TempDir()}
	src := filepath.Join("..", "..", "..", "testdata", "web", "vite-react", "dist")
	if err := os.CopyFS(e.build, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.build, "index.html")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(e.cdnDir, os.DirFS(e.build)); err != nil {
		t.Fatal(err)
	}
	e.cdn = testenv.Nginx(t, e.cdnDir)
	e.inst = testenv.Nginx(t, e.instDir)
	writeFile(t, filepath.Join(e.instDir, "index.html"), `<!doctype html><html><head>`+
		`<link rel="stylesheet" href="`+e.cdn+`/`+viteEntryCSS+`"><script type="module" src="`+e.cdn+`/`+viteEntryJS+`"></script>`+
		`</head><body><div id="root"></div></body></html>`)
	list, err := os.ReadFile(filepath.Join(e.build, ".vite", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(e.instDir, "manifest.json"), string(list))

	dir := t.TempDir()
	out, rep := filepath.Join(dir, "release.json"), filepath.Join(dir, "graph.json")
	if code, _, stderr := run(t, "record", "--release", "store-web", "--generation", "4", "--assets", e.build,
		"--cdn", e.cdn+"/", "--graph-report", rep, "--output", out); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	raw, err := os.ReadFile(rep)
	if err == nil {
		err = json.Unmarshal(raw, &e.report)
	}
	if err != nil {
		t.Fatalf("the graph report: %v", err)
	}
	m, _, err := manifest.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	im, conf := webImage()
	m.Images = []manifest.Image{im}
	m.APIVersion = m.Version()
	b, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, out, string(b))
	e.manifest = out
	e.probe = probeAttackEnv{manifest: out, config: conf}
	return e
}

// evilHost is a loopback server standing for a host outside the release,
// counting the requests it gets: none may come.
func evilHost(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/javascript")
		w.Write([]byte("export {}"))
	}))
	t.Cleanup(s.Close)
	return s.URL, &hits
}

// TestAttackEntries: the entry files a bundler's list names outside HTML
// are roots. A default admit of the instance's page (which names only the
// modern entry) refuses a CDN that lacks an entry only the list names, or
// what such an entry loads (exit 1, asset-missing-on-cdn naming it,
// nothing recorded); record refuses a list that names a file the build
// does not hold, a path outside it or a host outside the release (exit 2,
// no manifest written, nothing fetched); a probed list that names a file
// the manifest does not hold or another host is refused, the host never
// asked.
func TestAttackEntries(t *testing.T) {
	t.Parallel()
	e := newEntriesEnv(t)
	home := e.inst + "/index.html"

	t.Run("record reports each entry with its list", func(t *testing.T) {
		var got []string
		for _, en := range e.report.Entries {
			got = append(got, en.Path+"<"+en.List+" "+en.Format)
		}
		want := []string{viteEntryJS + "<.vite/manifest.json vite", viteEntryCSS + "<.vite/manifest.json vite",
			viteLegacyEntry + "<.vite/manifest.json vite", vitePolyfills + "<.vite/manifest.json vite"}
		if !slices.Equal(got, want) {
			t.Errorf("entries %q, want %q", got, want)
		}
		for _, p := range []string{viteLegacyEntry, vitePolyfills, viteLegacyLazy} {
			if slices.Contains(e.report.Unreached, p) {
				t.Errorf("%s is unreached (%q)", p, e.report.Unreached)
			}
		}
		m, _, err := manifest.ReadFile(e.manifest)
		if err != nil {
			t.Fatal(err)
		}
		if m.APIVersion != manifest.APIVersionV3 {
			t.Errorf("apiVersion %s, want %s (entry files marked)", m.APIVersion, manifest.APIVersionV3)
		}
	})
	t.Run("record finds the list when it is kept off the CDN (--exclude .vite)", func(t *testing.T) {
		dir := t.TempDir()
		out, rep := filepath.Join(dir, "release.json"), filepath.Join(dir, "graph.json")
		if code, _, stderr := run(t, "record", "--release", "store-web", "--generation", "4", "--assets", e.build,
			"--exclude", ".vite", "--cdn", e.cdn+"/", "--graph-report", rep, "--output", out); code != 0 {
			t.Fatalf("record: exit %d\n%s", code, stderr)
		}
		var g graph.Result
		raw, err := os.ReadFile(rep)
		if err == nil {
			err = json.Unmarshal(raw, &g)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Entries) != len(e.report.Entries) || slices.Contains(g.Unreached, viteLegacyEntry) {
			t.Errorf("entries %v, unreached %q; want the %d of the build's list, the legacy entry reached", g.Entries, g.Unreached, len(e.report.Entries))
		}
		m, _, err := manifest.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Assets.File(".vite/manifest.json"); ok {
			t.Error("the excluded list was recorded as an asset")
		}
	})
	added := 0 // what the closure adds to the page's references
	t.Run("the correct deployment is admitted", func(t *testing.T) {
		code, d, state, stderr := e.probe.admitDecision(t, home)
		if code != 0 || !stateWritten(t, state) {
			t.Fatalf("exit %d, refusing %v; stderr:\n%s", code, d.Refusals(), stderr)
		}
		if d.Closure == nil || d.Closure.Entries != 4 {
			t.Fatalf("closure %+v, want 4 entry files among its roots", d.Closure)
		}
		added = d.Closure.Assets - d.Closure.Referenced
	})
	t.Run("a file nothing loads may be absent", func(t *testing.T) {
		gone(t, e.cdnDir, "favicon.svg")
		if code, kinds, _, stderr := e.probe.admitPage(t, home); code != 0 {
			t.Fatalf("exit %d, refusing %v; stderr:\n%s", code, kinds, stderr)
		}
	})
	for _, tt := range []struct{ name, file string }{
		{"an entry only the list names (legacy chunk)", viteLegacyEntry},
		{"an entry only the list names (legacy polyfills)", vitePolyfills},
		{"a dynamic import of an entry only the list names", viteLegacyLazy},
	} {
		t.Run("gate/"+tt.name, func(t *testing.T) {
			gone(t, e.cdnDir, tt.file)
			code, d, state, stderr := e.probe.admitDecision(t, home)
			var refusing []string
			for _, f := range d.Refusals() {
				refusing = append(refusing, string(f.Kind)+" "+f.Subject)
			}
			if want := []string{"asset-missing-on-cdn " + tt.file}; code != 1 || !slices.Equal(refusing, want) {
				t.Errorf("without %s on the CDN: exit %d, refusing %q, want 1 and %q; stderr:\n%s", tt.file, code, refusing, want, stderr)
			}
			if stateWritten(t, state) {
				t.Errorf("a refused check recorded a generation")
			}
		})
	}
	t.Run("gate/the bound counts the entries", func(t *testing.T) {
		// One under what the closure adds is refused, never checked in
		// part; exactly what it adds is admitted.
		code, kinds, state, stderr := e.probe.admitPage(t, home, "--max-closure", strconv.Itoa(added-1))
		if code != 3 || !slices.Equal(kinds, []string{"closure-too-large"}) || stateWritten(t, state) {
			t.Errorf("--max-closure %d: exit %d, refusing %v, state written %v; want 3, closure-too-large, none; stderr:\n%s", added-1, code, kinds, stateWritten(t, state), stderr)
		}
		if code, kinds, _, stderr := e.probe.admitPage(t, home, "--max-closure", strconv.Itoa(added)); code != 0 {
			t.Errorf("--max-closure %d: exit %d, refusing %v; stderr:\n%s", added, code, kinds, stderr)
		}
	})

	evil, hits := evilHost(t)
	for _, tt := range []struct{ name, list, body, want string }{
		{"a Vite entry the build does not hold", ".vite/manifest.json",
			`{"src/a.ts": {"file": "assets/a-OTHERBUILD.js", "isEntry": true}}`, `"assets/a-OTHERBUILD.js", which is not a file of the release`},
		{"a Vite entry on another host", ".vite/manifest.json",
			`{"src/a.ts": {"file": "` + evil + `/a.js", "isEntry": true}}`, "none of the CDN bases"},
		{"a Vite entry outside the asset directory", ".vite/manifest.json",
			`{"src/a.ts": {"file": "../../../etc/passwd", "isEntry": true}}`, "outside the asset directory"},
		{"a webpack entrypoint on another host", "asset-manifest.json",
			`{"files": {}, "entrypoints": ["` + evil + `/main.js"]}`, "none of the CDN bases"},
		{"a webpack entrypoint of another build", "assets-manifest.json",
			`{"entrypoints": {"main": {"assets": {"js": ["js/main.0ther0.js"]}}}}`, "not a file of the release"},
	} {
		t.Run("record/"+tt.name, func(t *testing.T) {
			build := t.TempDir()
			if err := os.CopyFS(build, os.DirFS(e.build)); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(build, filepath.FromSlash(tt.list)), tt.body)
			dir := t.TempDir()
			out, rep := filepath.Join(dir, "release.json"), filepath.Join(dir, "graph.json")
			code, stdout, stderr := run(t, "record", "--release", "store-web", "--generation", "5", "--assets", build,
				"--cdn", e.cdn+"/", "--graph-report", rep, "--output", out)
			if code != 2 || !strings.Contains(stderr, tt.list) || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want 2 naming %s and %q; stderr:\n%s", code, tt.list, tt.want, stderr)
			}
			for _, f := range []string{out, rep} {
				if _, err := os.Stat(f); !os.IsNotExist(err) {
					t.Errorf("a refused record wrote %s (%v)", f, err)
				}
			}
			if stdout != "" {
				t.Errorf("a refused record printed %q", stdout)
			}
		})
	}

	for _, tt := range []struct{ name, body, kind string }{
		{"gate/a probed list naming a file the manifest does not hold",
			`{"src/a.ts": {"file": "assets/a-OTHERBUILD.js", "isEntry": true}}`, "asset-not-in-manifest"},
		{"gate/a probed list naming another host",
			`{"src/a.ts": {"file": "` + evil + `/a.js", "isEntry": true}}`, "asset-foreign-host"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, filepath.Join(e.instDir, "other.json"), tt.body)
			code, kinds, state, stderr := e.probe.admitPage(t, e.inst+"/other.json")
			if code != 1 || !slices.Contains(kinds, tt.kind) || stateWritten(t, state) {
				t.Errorf("exit %d, refusing %v, state written %v; want 1 and %s, none; stderr:\n%s", code, kinds, stateWritten(t, state), tt.kind, stderr)
			}
		})
	}
	t.Run("gate/the build's own list, probed, is admitted", func(t *testing.T) {
		if code, kinds, _, stderr := e.probe.admitPage(t, e.inst+"/manifest.json"); code != 0 {
			t.Errorf("exit %d, refusing %v; stderr:\n%s", code, kinds, stderr)
		}
	})
	if n := hits.Load(); n != 0 {
		t.Errorf("the host outside the release was asked %d times", n)
	}
}
