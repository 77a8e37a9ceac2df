package graph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/golden"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// fixtures are the real Vite and webpack builds (testdata/web at the root,
// scripts/build-web-fixtures.sh).
var fixtures = []struct {
	name, publicPath string
	lists            []string
}{
	{"vite-react", "", []string{".vite/manifest.json"}},
	{"webpack", "/static/", []string{"asset-manifest.json", "assets-manifest.json"}},
}

func fixtureDir(name string) string {
	return filepath.Join("..", "..", "..", "testdata", "web", name, "dist")
}

// record hashes a fixture as record does (with its lists, the files they
// do not name recorded too) and builds its graph.
func record(t *testing.T, name, publicPath string, lists []string, useLists bool) ([]manifest.File, *Result) {
	t.Helper()
	dir := fixtureDir(name)
	var abs []string
	if useLists {
		for _, l := range lists {
			abs = append(abs, filepath.Join(dir, l))
		}
	}
	h, err := assets.Hash(context.Background(), assets.Options{Dir: dir, Lists: abs, PublicPath: publicPath})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Build(context.Background(), h.Files, Options{Dir: dir, Lists: abs, PublicPath: publicPath, CDN: []string{"https://cdn.example/app/"}})
	if err != nil {
		t.Fatal(err)
	}
	return h.Files, res
}

func render(files []manifest.File) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%s\n", f.Path)
		for _, l := range f.Loads {
			fmt.Fprintf(&b, "  -> %s\n", l)
		}
	}
	return b.String()
}

// TestFixtureGraphs: record on each real build gives the graph in
// testdata/NAME.graph (go test -update rewrites it; read the diff).
func TestFixtureGraphs(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			files, res := record(t, fx.name, fx.publicPath, fx.lists, true)
			if len(res.Unparsed) > 0 {
				t.Errorf("the parser refused %q", res.Unparsed)
			}
			golden.Check(t, fx.name+".graph", render(files))
		})
	}
}

// TestListsAndReadingAgree: where a Vite manifest and the files both speak
// they agree. Every chunk the manifest says a chunk imports (statically or
// dynamically) is found in that chunk's code, and every file the manifest
// says a chunk needs (its CSS, its assets) is reachable by reading alone
// from the page. What the manifest does not say, reading finds: the worker.
func TestListsAndReadingAgree(t *testing.T) {
	dir := fixtureDir("vite-react")
	data, err := os.ReadFile(filepath.Join(dir, ".vite", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := assets.ParseList(data, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	read, _ := record(t, "vite-react", "", nil, false)
	a := &manifest.Assets{Files: read}
	byPath := map[string][]string{}
	for _, f := range read {
		byPath[f.Path] = f.Loads
	}
	page := a.Closure([]string{"index.html"})
	edges := 0
	for from, tos := range list.Loads {
		for _, to := range tos {
			edges++
			if strings.HasSuffix(to, ".js") && !slices.Contains(byPath[from], to) {
				t.Errorf("the manifest says %s imports %s; reading %s does not find it", from, to, from)
			}
			if !slices.Contains(page, to) {
				t.Errorf("the manifest says %s needs %s; reading from index.html does not reach it", from, to)
			}
		}
	}
	if edges < 8 {
		t.Errorf("the manifest gave %d edges, want the fixture's 8 or more", edges)
	}
	for _, p := range list.Paths {
		if strings.Contains(p, "worker-") {
			t.Errorf("the Vite manifest now names the worker %s: update the fixture's README", p)
		}
	}
	worker := ""
	for _, f := range read {
		if strings.HasPrefix(f.Path, "assets/worker-") {
			worker = f.Path
		}
	}
	if worker == "" || !slices.Contains(page, worker) {
		t.Errorf("reading from index.html does not reach the worker (%q)", worker)
	}
}

// TestFixtureClosures: from each build's page, the closure holds every file
// a browser may load and leaves out only what no page loads (source maps,
// the lists, robots.txt).
func TestFixtureClosures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			files, _ := record(t, fx.name, fx.publicPath, fx.lists, true)
			closure := (&manifest.Assets{Files: files}).Closure([]string{"index.html"})
			var left []string
			for _, f := range files {
				if !slices.Contains(closure, f.Path) {
					left = append(left, f.Path)
				}
			}
			for _, p := range left {
				if !strings.HasSuffix(p, ".map") && !strings.HasSuffix(p, ".json") && p != "robots.txt" {
					t.Errorf("%s: %s is not reachable from index.html", fx.name, p)
				}
			}
		})
	}
}

// TestComputedURLIsNoEdge answers the attacker's question: a URL built at
// run time from pieces no literal holds is not in the graph. That is why
// cdn check and admit --all-assets check every file.
func TestComputedURLIsNoEdge(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app.js", `import("./seen.js"); const n = ["hid", "den"].join(""); import("./" + n + ".js")`)
	write("seen.js", "")
	write("hidden.js", "")
	h, err := assets.Hash(context.Background(), assets.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(context.Background(), h.Files, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if got := h.Files[0].Loads; !slices.Equal(got, []string{"seen.js"}) {
		t.Errorf("app.js loads %q, want only seen.js", got)
	}
}

// TestChangedSinceHashed: a file that changed between hashing and reading
// is an error, not a graph of other bytes.
func TestChangedSinceHashed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.js")
	if err := os.WriteFile(p, []byte(`import("./b.js")`), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := assets.Hash(context.Background(), assets.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`import("./c.js")`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), h.Files, Options{Dir: dir})
	var ae *assets.Error
	if !errors.As(err, &ae) || ae.Path != "app.js" || !strings.Contains(ae.Reason, "changed since it was hashed") {
		t.Errorf("Build = %v, want an *assets.Error for app.js", err)
	}
}

// TestCollected: references gathered while hashing (assets.Options.Inspect)
// give the same graph as reading the files, and Build reads none of them
// again: here they are gone from the disk by then.
func TestCollected(t *testing.T) {
	src := fixtureDir("vite-react")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	lists := []string{filepath.Join(dir, ".vite", "manifest.json")}
	c := &Collector{}
	h, err := assets.Hash(context.Background(), assets.Options{Dir: dir, Lists: lists, Inspect: c.Inspect})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range h.Files {
		if readable(kind(f.Path)) {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := Build(context.Background(), h.Files, Options{Dir: dir, Lists: lists, Collected: c, CDN: []string{"https://cdn.example/app/"}}); err != nil {
		t.Fatal(err)
	}
	want, _ := record(t, "vite-react", "", []string{".vite/manifest.json"}, true)
	if got, want := render(h.Files), render(want); got != want {
		t.Errorf("the collected graph differs from the read one:\n%s\nwant\n%s", got, want)
	}
}

// TestBinaryIsNotRead: a file named .js that holds binary data has no
// references (and costs no parse), and is reported as unread.
func TestBinaryIsNotRead(t *testing.T) {
	if r := refsOf("a.js", []byte("\x00\x01import(\"./b.js\")")); len(r.refs) != 0 || r.unread == "" {
		t.Errorf("refs of binary = %q (unread %q), want none, and a reason", r.refs, r.unread)
	}
	if r := refsOf("a.js", []byte("\xff\xfeimport(\"./b.js\")")); len(r.refs) != 0 {
		t.Errorf("refs of invalid UTF-8 = %q, want none", r.refs)
	}
	if r := refsOf("a.js", []byte("/* é */ import(\"./b.js\")")); len(r.refs) != 1 {
		t.Errorf("refs of UTF-8 text = %q, want ./b.js", r.refs)
	}
}
