package admission_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	webassets "github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/assets/graph"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

// webFixture is a real build (testdata/web, made by Vite and webpack:
// scripts/build-web-fixtures.sh) recorded with its asset graph.
type webFixture struct {
	name string
	// publicPath is where the build's files are served (webpack's
	// output.publicPath); the instance serves index.html at "/" and the
	// files under it, the CDN under its base's path.
	publicPath string
	lists      []string
	// The files of each break.
	lazy, font, worker, legacy, entry string
}

var webFixtures = []webFixture{
	{name: "vite-react", publicPath: "/", lists: []string{".vite/manifest.json"},
		lazy: "assets/Report--TfcrJ_6.js", font: "assets/fixture-vG0SWmOK.woff2", worker: "assets/worker-DSJ1NDtR.js",
		legacy: "assets/index-legacy-BJUse8hi.js", entry: "assets/index-B4TPZJfM.js"},
	{name: "webpack", publicPath: "/static/", lists: []string{"asset-manifest.json", "assets-manifest.json"},
		lazy: "js/report.50729254.chunk.js", font: "media/fixture.2ba9fd9d.woff2", worker: "js/408.bdf92cd7.chunk.js",
		entry: "js/main.8fce7357.js"},
}

// webDeployment is a fixture deployed: the manifest record would write
// (with the graph), an instance serving the build itself and a CDN
// serving it too, each from a copy of the files that a case may change.
type webDeployment struct {
	m        *manifest.Manifest
	path     string
	instance *httptest.Server
	cdn      *httptest.Server
	mu       sync.Mutex
	onApp    map[string][]byte // by URL path
	onCDN    map[string][]byte // by asset path
}

func deploy(t *testing.T, fx webFixture) *webDeployment {
	t.Helper()
	dir := filepath.Join("..", "testdata", "web", fx.name, "dist")
	var lists []string
	for _, l := range fx.lists {
		lists = append(lists, filepath.Join(dir, l))
	}
	publicPath := strings.TrimSuffix(fx.publicPath, "/") + "/"
	if publicPath == "/" {
		publicPath = ""
	}
	ctx := context.Background()
	h, err := webassets.Hash(ctx, webassets.Options{Dir: dir, Lists: lists, PublicPath: publicPath})
	if err != nil {
		t.Fatal(err)
	}
	w := &webDeployment{onApp: map[string][]byte{}, onCDN: map[string][]byte{}}
	w.cdn = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		body, ok := w.onCDN[strings.TrimPrefix(r.URL.Path, fx.publicPath)]
		w.mu.Unlock()
		serve(rw, r, r.URL.Path, body, ok)
	}))
	t.Cleanup(w.cdn.Close)
	w.instance = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "/" {
			p = fx.publicPath + "index.html"
		}
		w.mu.Lock()
		body, ok := w.onApp[p]
		w.mu.Unlock()
		serve(rw, r, p, body, ok)
	}))
	t.Cleanup(w.instance.Close)
	base := w.cdn.URL + fx.publicPath
	if _, err := graph.Build(ctx, h.Files, graph.Options{Dir: dir, Lists: lists, PublicPath: publicPath, CDN: []string{base}}); err != nil {
		t.Fatal(err)
	}
	// Both serve the whole build, the lists too (which the manifest does
	// not record).
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		w.onCDN[filepath.ToSlash(rel)] = b
		w.onApp[fx.publicPath+filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	w.m = &manifest.Manifest{Kind: manifest.Kind,
		Release: manifest.Release{Name: "store-web", Generation: 7, CreatedAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second)},
		Images:  []manifest.Image{webImage()},
		Assets:  manifest.Assets{CDN: []string{base}, Files: h.Files, Fingerprint: manifest.Fingerprint(h.Files)}}
	w.m.APIVersion = w.m.Version()
	if w.m.APIVersion != manifest.APIVersionV2 {
		t.Fatalf("the %s build has no asset graph", fx.name)
	}
	raw, err := w.m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	w.path = filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(w.path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// serve answers with body, typed by its path's extension, or a 404.
func serve(rw http.ResponseWriter, r *http.Request, p string, body []byte, ok bool) {
	if !ok {
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", webassets.ContentType(p))
	rw.Header().Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method != http.MethodHead {
		rw.Write(body)
	}
}

func (w *webDeployment) config(probes ...string) admission.Config {
	if len(probes) == 0 {
		probes = []string{"/"}
	}
	for i, p := range probes {
		probes[i] = w.instance.URL + p
	}
	return admission.Config{
		CDN:    cdngate.Checker{},
		Source: manifest.FileSource{Path: w.path}, AllowUnsigned: true,
		Image: "web", Running: running.Given{Value: amd64Conf.String()}, Platform: "linux/amd64",
		Probes:  probes,
		Client:  transport.New(transport.Policy{MaxAttempts: 2, BaseDelay: time.Millisecond}),
		Timeout: 20 * time.Second,
		Rand:    rand.New(rand.NewPCG(1, 2)),
	}
}

// TestWebFixtures: each real build, deployed correctly, is admitted, and
// each break that only its JavaScript or CSS shows is refused with its
// finding: the closure, by the recorded graph, reaches what the page
// does not name.
func TestWebFixtures(t *testing.T) {
	for _, fx := range webFixtures {
		t.Run(fx.name, func(t *testing.T) {
			type breakCase struct {
				name    string
				edit    func(w *webDeployment)
				want    []admission.Kind
				subject string
				probes  []string
				// flat: the closure adds nothing to what the probes name
				// (they name every file, or an entry the manifest lacks).
				flat bool
			}
			gone := func(p string) func(w *webDeployment) { return func(w *webDeployment) { delete(w.onCDN, p) } }
			cases := []breakCase{
				{name: "the correct deployment"},
				{name: "a lazy chunk missing on the CDN", edit: gone(fx.lazy), want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: fx.lazy},
				{name: "a CSS font missing on the CDN", edit: gone(fx.font), want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: fx.font},
				{name: "a worker missing on the CDN", edit: gone(fx.worker), want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: fx.worker},
				{name: "a lazy chunk the instance lacks", edit: func(w *webDeployment) { delete(w.onApp, fx.publicPath+fx.lazy) },
					want: []admission.Kind{admission.KindAssetMissingOnInstance}, subject: fx.lazy},
				// The instance runs a newer build than the manifest and the
				// CDN: its HTML names an entry neither has (the Epic case).
				{name: "the HTML of a newer build on an older CDN", edit: func(w *webDeployment) {
					p := fx.publicPath + "index.html"
					newer := strings.Replace(string(w.onApp[p]), fx.entry, strings.Replace(fx.entry, ".", "N3WBU1LD.", 1), 1)
					if newer == string(w.onApp[p]) {
						t.Fatalf("%s names no %s", p, fx.entry)
					}
					w.onApp[p] = []byte(newer)
				}, want: []admission.Kind{admission.KindAssetMissingOnCDN, admission.KindAssetNotInManifest}, flat: fx.name == "webpack"},
				{name: "the bundler's own list as a probe", probes: []string{"/", fx.publicPath + fx.lists[0]}, flat: fx.name == "webpack"},
			}
			if fx.legacy != "" {
				cases = append(cases, breakCase{name: "the legacy entry missing on the CDN", edit: gone(fx.legacy),
					want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: fx.legacy})
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					w := deploy(t, fx)
					if tc.edit != nil {
						tc.edit(w)
					}
					d := admission.Check(context.Background(), w.config(tc.probes...))
					want := slices.Sorted(slices.Values(tc.want))
					if got := kinds(d, admission.Refuse); !slices.Equal(got, want) {
						t.Fatalf("refusing kinds = %v, want %v; findings:\n%s", got, want, dump(d))
					}
					if tc.subject != "" && !slices.ContainsFunc(d.Findings, func(f admission.Finding) bool { return f.Subject == tc.subject }) {
						t.Errorf("no finding names %s:\n%s", tc.subject, dump(d))
					}
					if d.Closure == nil || !d.Closure.Graph || !tc.flat && d.Closure.Assets <= d.Closure.Referenced {
						t.Errorf("Closure = %+v: want the graph to add what the page does not name", d.Closure)
					}
					if len(want) == 0 && (d.Closure.Checked != d.Closure.Assets || d.InstanceChecked == 0) {
						t.Errorf("Closure = %+v, InstanceChecked = %d: want the whole closure checked, on the instance too", d.Closure, d.InstanceChecked)
					}
				})
			}
		})
	}
}

// TestWebFixturesWithoutTheGraph: the same builds recorded without a graph
// (a v1 manifest) are checked on the references alone, as before, and a
// lazy chunk missing from the CDN goes unseen: what the graph is for.
func TestWebFixturesWithoutTheGraph(t *testing.T) {
	for _, fx := range webFixtures {
		t.Run(fx.name, func(t *testing.T) {
			w := deploy(t, fx)
			for i := range w.m.Assets.Files {
				w.m.Assets.Files[i].Loads = nil
			}
			w.m.APIVersion = w.m.Version()
			raw, err := w.m.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(w.path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			delete(w.onCDN, fx.lazy)
			d := admission.Check(context.Background(), w.config())
			if !d.Allowed || d.Closure == nil || d.Closure.Graph || d.Closure.Assets != d.Closure.Referenced {
				t.Errorf("Allowed %v, Closure %+v: want admitted on the references alone\n%s", d.Allowed, d.Closure, dump(d))
			}
		})
	}
}
