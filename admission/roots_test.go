package admission_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
)

// rootsAssets are graphAssets with two pages: index.html, which the probe
// reads, and about/index.html, which it does not, with a stylesheet and
// a font of its own.
var rootsAssets = func() map[string]string {
	a := maps.Clone(graphAssets)
	a["index.html"] = graphPage
	a["about/index.html"] = `<link rel=stylesheet href="/css/about.7777.css">`
	a["css/about.7777.css"] = "@font-face{src:url(../fonts/b.8888.woff2)}"
	a["fonts/b.8888.woff2"] = "wOF2b"
	a["about/__next.about.__PAGE__.txt"] = `1:I[1,["/js/rsc.9999.js"]]`
	a["js/rsc.9999.js"] = "export default 1"
	return a
}()

// withRootsGraph gives the fixture's manifest the graph of rootsAssets.
func withRootsGraph(fx *fixture) {
	loads := maps.Clone(graphLoads)
	loads["index.html"] = []string{"css/site.4444.css", "js/app.1111.js"}
	loads["about/index.html"] = []string{"css/about.7777.css"}
	loads["css/about.7777.css"] = []string{"fonts/b.8888.woff2"}
	loads["about/__next.about.__PAGE__.txt"] = []string{"js/rsc.9999.js"}
	for i, f := range fx.m.Assets.Files {
		fx.m.Assets.Files[i].Loads = loads[f.Path]
	}
}

// TestCheckClosureEveryPage: the closure starts from every page (and RSC
// payload) of the release, not only the probed page: what a route that is not probed loads
// is checked, the pages themselves are not (the instance serves them),
// and the bound counts what the pages add.
func TestCheckClosureEveryPage(t *testing.T) {
	tests := []closureCase{
		{name: "every page's loads are on the CDN",
			closure: admission.Closure{Graph: true, Referenced: 2, Roots: 3, Assets: 9, Checked: 9}, cdnChecks: 9},
		{name: "an unprobed route's font missing", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "fonts/b.8888.woff2") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "fonts/b.8888.woff2",
			closure: admission.Closure{Graph: true, Referenced: 2, Roots: 3, Assets: 9, Checked: 9}, cdnChecks: 9},
		{name: "an unprobed route's stylesheet missing", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "css/about.7777.css") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "css/about.7777.css",
			closure: admission.Closure{Graph: true, Referenced: 2, Roots: 3, Assets: 9, Checked: 9}, cdnChecks: 9},
		{name: "a chunk only an RSC payload names, missing", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "js/rsc.9999.js") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "js/rsc.9999.js",
			closure: admission.Closure{Graph: true, Referenced: 2, Roots: 3, Assets: 9, Checked: 9}, cdnChecks: 9},
		{name: "the pages are not looked for on the CDN", edit: func(fx *fixture, c *admission.Config) {
			delete(fx.cdnFiles, "index.html")
			delete(fx.cdnFiles, "about/index.html")
		}, closure: admission.Closure{Graph: true, Referenced: 2, Roots: 3, Assets: 9, Checked: 9}, cdnChecks: 9},
		{name: "the bound counts what the pages add", edit: func(fx *fixture, c *admission.Config) { c.MaxClosure = 5 },
			want: []admission.Kind{admission.KindClosureTooLarge}, unverified: true,
			closure: admission.Closure{Graph: true, Referenced: 2, Roots: 3, Assets: 9, Checked: 2, Max: 5}, cdnChecks: 2},
	}
	runRootsCases(t, tests, rootsAssets, withRootsGraph)
}

// entryAssets are rootsAssets with a server-rendered entry point that no
// page names (Vite's backend integration: the server renders its tag from
// .vite/manifest.json), a lazy chunk and a stylesheet it loads.
var entryAssets = func() map[string]string {
	a := maps.Clone(rootsAssets)
	a["js/admin.aaaa.js"] = "import('./admin-lazy.bbbb.js')"
	a["js/admin-lazy.bbbb.js"] = "export default 1"
	a["css/admin.cccc.css"] = "body{}"
	return a
}()

// withEntryGraph gives the fixture's manifest the graph of entryAssets,
// with the admin script and its stylesheet as entry files.
func withEntryGraph(fx *fixture) {
	withRootsGraph(fx)
	for i, f := range fx.m.Assets.Files {
		switch f.Path {
		case "js/admin.aaaa.js":
			fx.m.Assets.Files[i].Loads = []string{"js/admin-lazy.bbbb.js"}
			fx.m.Assets.Files[i].Entry = true
		case "css/admin.cccc.css":
			fx.m.Assets.Files[i].Entry = true
		}
	}
}

// TestCheckClosureEntries: an entry file a bundler's list names
// (File.Entry) is a root: the gate checks it and what it loads although
// no page names it, and the bound counts it.
func TestCheckClosureEntries(t *testing.T) {
	whole := admission.Closure{Graph: true, Referenced: 2, Roots: 5, Entries: 2, Assets: 12, Checked: 12}
	tests := []closureCase{
		{name: "the entries and their loads are on the CDN", closure: whole, cdnChecks: 12},
		{name: "an entry script missing", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "js/admin.aaaa.js") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "js/admin.aaaa.js", closure: whole, cdnChecks: 12},
		{name: "an entry stylesheet missing", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "css/admin.cccc.css") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "css/admin.cccc.css", closure: whole, cdnChecks: 12},
		{name: "an entry's lazy chunk changed", edit: func(fx *fixture, c *admission.Config) { fx.cdnFiles["js/admin-lazy.bbbb.js"] = "export default 22" },
			want: []admission.Kind{admission.KindAssetContentMismatch}, subject: "js/admin-lazy.bbbb.js", closure: whole, cdnChecks: 12},
		{name: "the bound counts the entries", edit: func(fx *fixture, c *admission.Config) { c.MaxClosure = 9 },
			want: []admission.Kind{admission.KindClosureTooLarge}, unverified: true,
			closure: admission.Closure{Graph: true, Referenced: 2, Roots: 5, Entries: 2, Assets: 12, Checked: 2, Max: 9}, cdnChecks: 2},
	}
	runRootsCases(t, tests, entryAssets, withEntryGraph)
}

// runRootsCases checks each case against a fixture of assets whose
// manifest graph is set by withGraph: the refusals, Decision.Closure and
// the CDN checks.
func runRootsCases(t *testing.T, tests []closureCase, assets map[string]string, withGraph func(*fixture)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, assets, graphPage)
			withGraph(fx)
			d := checkRefusing(t, fx, tt.edit, tt.want)
			if d.Unverified != tt.unverified {
				t.Errorf("Unverified = %v, want %v", d.Unverified, tt.unverified)
			}
			want := tt.closure
			if want.Max == 0 {
				want.Max = admission.DefaultMaxClosure
			}
			if d.Closure == nil || *d.Closure != want {
				t.Errorf("Closure = %+v, want %+v", d.Closure, want)
			}
			if d.CDNChecked != tt.cdnChecks {
				t.Errorf("CDNChecked = %d, want %d", d.CDNChecked, tt.cdnChecks)
			}
			if tt.subject != "" && !slices.ContainsFunc(d.Findings, func(f admission.Finding) bool { return f.Subject == tt.subject }) {
				t.Errorf("no finding names %s:\n%s", tt.subject, dump(d))
			}
		})
	}
}
