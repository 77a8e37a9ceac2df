package app_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/assets/graph"
)

// graphBuild is a release whose pages make a browser load files through
// every class of issue 34's first three: the pages that are not probed
// (class 1), the elements and attributes of the shared HTML table (class
// 2), and the files that load others: an SVG document, a web app
// manifest, browserconfig.xml, a service worker's precache list (class
// 3). "CDN" stands for the CDN's base URL.
var graphBuild = map[string]string{
	"index.html": `<!doctype html><base href="CDN/">
<link rel=stylesheet href="css/site.css"><link rel=manifest href="app.webmanifest">
<link rel=apple-touch-startup-image href="img/startup.png"><meta name=msapplication-config content="browserconfig.xml">
<script type=module src="js/app.js"></script><script type=module>import("./js/inline-lazy.js")</script>
<img srcset="img/a,b.png 1x, img/c.png 2x ((x), img/d.png 3x"><input type=image src="img/go.png"><video poster="img/poster.jpg"></video>
<svg><image href="img/inline-svg.png"/></svg><object data="img/logo.svg"></object>
<astro-island component-url="_astro/island.js" props="{}"></astro-island><noscript><img src="img/noscript.png"></noscript>`,
	"about/index.html":    `<!doctype html><base href="CDN/"><link rel=stylesheet href="css/about.css"><p>about`,
	"css/site.css":        `body{background:url(../img/bg.png)}`,
	"css/about.css":       `@font-face{font-family:b;src:url(../fonts/b.woff2)}`,
	"fonts/b.woff2":       "wOF2-b",
	"app.webmanifest":     `{"name":"store","start_url":"/","icons":[{"src":"img/icon-192.png","sizes":"192x192"}]}`,
	"browserconfig.xml":   `<?xml version="1.0"?><browserconfig><msapplication><tile><square150x150logo src="img/mstile.png"/></tile></msapplication></browserconfig>`,
	"js/app.js":           `navigator.serviceWorker.register("sw.js"); import("./lazy.js")`,
	"js/lazy.js":          `export const lazy = 1`,
	"sw.js":               `self.__WB_MANIFEST=[{"revision":"1","url":"js/precached.js"}]`,
	"js/precached.js":     `export const p = 1`,
	"js/inline-lazy.js":   `export const i = 1`,
	"_astro/island.js":    `export default function Island() {}`,
	"img/logo.svg":        `<svg xmlns="http://www.w3.org/2000/svg"><image href="inner.png" width="10" height="10"/></svg>`,
	"img/inner.png":       "PNG-inner",
	"img/bg.png":          "PNG-bg",
	"img/startup.png":     "PNG-startup",
	"img/a,b.png":         "PNG-ab",
	"img/c.png":           "PNG-c",
	"img/d.png":           "PNG-d",
	"img/go.png":          "PNG-go",
	"img/poster.jpg":      "JPG-poster",
	"img/inline-svg.png":  "PNG-inline-svg",
	"img/noscript.png":    "PNG-noscript",
	"img/icon-192.png":    "PNG-icon",
	"img/mstile.png":      "PNG-mstile",
	"img/never-named.png": "PNG-unreached",
}

// TestAttackGraph: a default admit --probe of the release's home page,
// against real nginx as the instance and the CDN. Deleting from the CDN
// any one file that a browser loads through a class of the graph is
// refused (exit 1, asset-missing-on-cdn naming it, no generation
// recorded); the correct deployment is admitted, and so is one without a
// file that nothing loads.
func TestAttackGraph(t *testing.T) {
	t.Parallel()
	cdnDir, appDir := t.TempDir(), t.TempDir()
	cdn := testenv.Nginx(t, cdnDir)
	build, pages := map[string]string{}, map[string]string{}
	for p, body := range graphBuild {
		build[p] = strings.ReplaceAll(body, "CDN/", cdn+"/")
		if strings.HasSuffix(p, ".html") {
			pages[p] = build[p]
		}
	}
	if err := scenario.WriteFiles(cdnDir, build); err != nil {
		t.Fatal(err)
	}
	if err := scenario.WriteFiles(appDir, pages); err != nil {
		t.Fatal(err)
	}
	app := testenv.Nginx(t, appDir)

	// The manifest as record makes it: the files hashed, the graph read.
	h, err := assets.Hash(context.Background(), assets.Options{Dir: cdnDir})
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Build(context.Background(), h.Files, graph.Options{Dir: cdnDir, CDN: []string{cdn + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Unread) != 0 || !slices.Equal(g.Unreached, []string{"img/never-named.png"}) {
		t.Fatalf("graph: unread %v, unreached %q; want none, and img/never-named.png", g.Unread, g.Unreached)
	}
	im, conf := webImage()
	m := &manifest.Manifest{Kind: manifest.Kind,
		Release: manifest.Release{Name: "store-web", Generation: 4, CreatedAt: scenario.Epoch.Add(4 * time.Hour)},
		Images:  []manifest.Image{im},
		Assets:  manifest.Assets{CDN: []string{cdn + "/"}, Files: h.Files}}
	m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
	m.APIVersion = m.Version()
	raw, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(t.TempDir(), "release.json")
	if err := os.WriteFile(mpath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e := probeAttackEnv{manifest: mpath, config: conf}
	home := app + "/index.html"

	t.Run("the correct deployment is admitted", func(t *testing.T) {
		if code, kinds, state, stderr := e.admitPage(t, home); code != 0 || !stateWritten(t, state) {
			t.Fatalf("exit %d, refusing %v, state written %v; stderr:\n%s", code, kinds, stateWritten(t, state), stderr)
		}
	})
	t.Run("a file nothing loads may be absent", func(t *testing.T) {
		gone(t, cdnDir, "img/never-named.png")
		if code, kinds, _, stderr := e.admitPage(t, home); code != 0 {
			t.Fatalf("exit %d, refusing %v; stderr:\n%s", code, kinds, stderr)
		}
	})
	t.Run("2 html/an island of another build", func(t *testing.T) {
		// The instance serves a page of another build: its island names a
		// file under the CDN base that the release does not hold. A
		// custom element's URL is optional only on the page's own origin.
		idx := filepath.Join(appDir, "index.html")
		orig, err := os.ReadFile(idx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { writeFile(t, idx, string(orig)) })
		writeFile(t, idx, strings.Replace(string(orig), "_astro/island.js", "_astro/island.other.js", 1))
		code, d, state, stderr := e.admitDecision(t, home)
		var refusing []string
		for _, f := range d.Refusals() {
			refusing = append(refusing, string(f.Kind)+" "+f.Subject)
		}
		if want := "asset-not-in-manifest _astro/island.other.js"; code != 1 || !slices.Contains(refusing, want) {
			t.Errorf("exit %d, refusing %q, want 1 and %q; stderr:\n%s", code, refusing, want, stderr)
		}
		if stateWritten(t, state) {
			t.Errorf("a refused check recorded a generation")
		}
	})
	cases := []struct{ class, file string }{
		{"1 roots/an unprobed route's stylesheet", "css/about.css"},
		{"1 roots/the font of an unprobed route's stylesheet", "fonts/b.woff2"},
		{"2 html/srcset URL with a comma", "img/a,b.png"},
		{"2 html/srcset candidate after parenthesised descriptors", "img/d.png"},
		{"2 html/apple-touch-startup-image", "img/startup.png"},
		{"2 html/input type=image", "img/go.png"},
		{"2 html/video poster", "img/poster.jpg"},
		{"2 html/inline svg image", "img/inline-svg.png"},
		{"2 html/noscript img", "img/noscript.png"},
		{"2 html/custom element URL attribute", "_astro/island.js"},
		{"2 html/inline module script's import", "js/inline-lazy.js"},
		{"2 html/object data", "img/logo.svg"},
		{"2 html/stylesheet's image", "img/bg.png"},
		{"3 types/svg file's image", "img/inner.png"},
		{"3 types/web app manifest icon", "img/icon-192.png"},
		{"3 types/browserconfig.xml tile", "img/mstile.png"},
		{"3 types/workbox precache entry", "js/precached.js"},
		{"3 types/service worker", "sw.js"},
		{"3 types/a script's lazy chunk", "js/lazy.js"},
	}
	for _, tt := range cases {
		t.Run(tt.class, func(t *testing.T) {
			gone(t, cdnDir, tt.file)
			code, d, state, stderr := e.admitDecision(t, home)
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
}

// gone removes a file of dir for the rest of the (sub)test.
func gone(t *testing.T, dir, p string) {
	t.Helper()
	fp := filepath.Join(dir, filepath.FromSlash(p))
	body, err := os.ReadFile(fp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(fp); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(fp, body, 0o644); err != nil {
			t.Error(err)
		}
	})
}
