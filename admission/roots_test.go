package admission_test

import (
	"maps"
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, rootsAssets, graphPage)
			withRootsGraph(fx)
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
			if tt.subject != "" {
				found := false
				for _, f := range d.Findings {
					found = found || f.Subject == tt.subject
				}
				if !found {
					t.Errorf("no finding names %s:\n%s", tt.subject, dump(d))
				}
			}
		})
	}
}
