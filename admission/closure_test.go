package admission_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/manifest"
)

// A build with an asset graph: the page references the entry and its
// stylesheet; the entry loads a lazy chunk (which imports the entry back:
// a cycle) and a worker, the stylesheet a font and an image. unused.png is
// in no closure.
var graphAssets = map[string]string{
	"js/app.1111.js":     "import('./lazy.2222.js'); new Worker(new URL('./worker.3333.js', import.meta.url))",
	"js/lazy.2222.js":    "import './app.1111.js'",
	"js/worker.3333.js":  "onmessage = () => {}",
	"css/site.4444.css":  "@font-face{src:url(../fonts/a.5555.woff2)} body{background:url(../img/bg.6666.png)}",
	"fonts/a.5555.woff2": "wOF2",
	"img/bg.6666.png":    "PNG",
	"img/unused.png":     "PNG2",
}

var graphLoads = map[string][]string{
	"js/app.1111.js":    {"js/lazy.2222.js", "js/worker.3333.js"},
	"js/lazy.2222.js":   {"js/app.1111.js"},
	"css/site.4444.css": {"fonts/a.5555.woff2", "img/bg.6666.png"},
}

const graphPage = `<!doctype html><link rel=stylesheet href="CDN/css/site.4444.css"><script type=module src="CDN/js/app.1111.js"></script>`

// withGraph gives the fixture's manifest the asset graph (apiVersion v2).
func withGraph(fx *fixture) {
	for i, f := range fx.m.Assets.Files {
		fx.m.Assets.Files[i].Loads = graphLoads[f.Path]
	}
}

// closureCase is a case of TestCheckClosure and TestCheckOnInstance.
type closureCase struct {
	name    string
	page    string // the fixture's page, when not the test's own
	noGraph bool   // the manifest without its graph (v1)
	edit    func(fx *fixture, c *admission.Config)
	// want are the refusing kinds; subject is what a refusal names.
	want       []admission.Kind
	unverified bool
	subject    string
	// closure is Decision.Closure (Max DefaultMaxClosure when zero),
	// instance and cdnChecks the checks on the instance and the CDN.
	closure             admission.Closure
	instance, cdnChecks int
}

func TestCheckClosure(t *testing.T) {
	tests := []closureCase{
		{name: "the whole closure is on the CDN",
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 6}, cdnChecks: 6},
		{name: "a lazy chunk missing", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "js/lazy.2222.js") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "js/lazy.2222.js",
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 6}, cdnChecks: 6},
		{name: "a CSS font missing", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "fonts/a.5555.woff2") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "fonts/a.5555.woff2",
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 6}, cdnChecks: 6},
		{name: "a worker missing", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "js/worker.3333.js") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "js/worker.3333.js",
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 6}, cdnChecks: 6},
		{name: "an image of the CSS with other bytes", edit: func(fx *fixture, c *admission.Config) { fx.cdnFiles["img/bg.6666.png"] = "JPEG" },
			want: []admission.Kind{admission.KindAssetContentMismatch}, subject: "img/bg.6666.png",
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 6}, cdnChecks: 6},
		// A v1 manifest (no graph) is checked as before: the references
		// alone, and the lazy chunk's absence goes unseen, as the report says.
		{name: "no graph: the references only", noGraph: true, edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "js/lazy.2222.js") },
			closure: admission.Closure{Referenced: 2, Assets: 2, Checked: 2}, cdnChecks: 2},
		// --all-assets and --sample with a v1 manifest check what they did:
		// every asset, or the references and a sample of the rest.
		{name: "no graph: every asset", noGraph: true, edit: func(fx *fixture, c *admission.Config) { c.MaxClosure, c.AllAssets = 1, true },
			closure: admission.Closure{Referenced: 2, Assets: 2, Checked: 2, Max: 1}, cdnChecks: 7},
		{name: "no graph: a sample beyond the references", noGraph: true, edit: func(fx *fixture, c *admission.Config) { c.Sample = 2 },
			closure: admission.Closure{Referenced: 2, Assets: 2, Checked: 2}, cdnChecks: 4},
		{name: "no graph: a sampled asset missing", noGraph: true, edit: func(fx *fixture, c *admission.Config) {
			c.Sample = 5
			delete(fx.cdnFiles, "img/unused.png")
		},
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "img/unused.png",
			closure: admission.Closure{Referenced: 2, Assets: 2, Checked: 2}, cdnChecks: 7},
		// Over the bound: refused as could-not-check, the references still
		// checked (and nothing else: no partial closure called done).
		{name: "a closure over the bound", edit: func(fx *fixture, c *admission.Config) { c.MaxClosure = 3 },
			want: []admission.Kind{admission.KindClosureTooLarge}, unverified: true,
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 2, Max: 3}, cdnChecks: 2},
		{name: "a mismatch in the references beats the bound", edit: func(fx *fixture, c *admission.Config) {
			c.MaxClosure = 3
			delete(fx.cdnFiles, "js/app.1111.js")
		},
			want:    []admission.Kind{admission.KindAssetMissingOnCDN, admission.KindClosureTooLarge},
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 2, Max: 3}, cdnChecks: 2},
		// The bound is on the closure after the references are counted each
		// once: the entry referenced three times (other queries, a
		// fragment) makes no more room for what it loads.
		{name: "repeated references do not stretch the bound",
			page: `<!doctype html><link rel=stylesheet href="CDN/css/site.4444.css"><script type=module src="CDN/js/app.1111.js?v=1"></script>` +
				`<script type=module src="CDN/js/app.1111.js?v=2"></script><link rel=modulepreload href="CDN/js/app.1111.js#x">`,
			edit: func(fx *fixture, c *admission.Config) { c.MaxClosure = 3 },
			want: []admission.Kind{admission.KindClosureTooLarge}, unverified: true,
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 2, Max: 3}, cdnChecks: 2},
		{name: "at the bound", edit: func(fx *fixture, c *admission.Config) { c.MaxClosure = 4 },
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 6, Max: 4}, cdnChecks: 6},
		{name: "every asset: the bound does not apply", edit: func(fx *fixture, c *admission.Config) { c.MaxClosure, c.AllAssets = 1, true },
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 6, Max: 1}, cdnChecks: 7},
		{name: "a sample is drawn from beyond the closure", edit: func(fx *fixture, c *admission.Config) { c.Sample = 1 },
			closure: admission.Closure{Graph: true, Referenced: 2, Assets: 6, Checked: 6}, cdnChecks: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, graphAssets, cmp.Or(tt.page, graphPage))
			if !tt.noGraph {
				withGraph(fx)
			}
			d := checkRefusing(t, fx, tt.edit, tt.want)
			if d.Unverified != tt.unverified {
				t.Errorf("Unverified = %v, want %v", d.Unverified, tt.unverified)
			}
			if tt.subject != "" && !slices.ContainsFunc(d.Findings, func(f admission.Finding) bool { return f.Subject == tt.subject }) {
				t.Errorf("no finding names %s:\n%s", tt.subject, dump(d))
			}
			wantClosure := tt.closure
			if wantClosure.Max == 0 {
				wantClosure.Max = admission.DefaultMaxClosure
			}
			if d.Closure == nil || *d.Closure != wantClosure {
				t.Errorf("Closure = %+v, want %+v", d.Closure, wantClosure)
			}
			if d.CDNChecked != tt.cdnChecks || fx.cdnHits != tt.cdnChecks {
				t.Errorf("CDNChecked = %d, CDN requests = %d, want %d each (deduplicated: the cycle costs nothing)", d.CDNChecked, fx.cdnHits, tt.cdnChecks)
			}
		})
	}
}

// checkRefusing checks fx, after edit (if any) on it and its config, and
// fails unless the refusing kinds are want.
func checkRefusing(t *testing.T, fx *fixture, edit func(fx *fixture, c *admission.Config), want []admission.Kind) admission.Decision {
	t.Helper()
	cfg := fx.config(amd64Conf.String())
	if edit != nil {
		edit(fx, &cfg)
	}
	fx.write(t)
	d := admission.Check(context.Background(), cfg)
	if testing.Verbose() {
		var b strings.Builder
		d.Write(&b, "text")
		t.Log(b.String())
	}
	want = slices.Sorted(slices.Values(want))
	if got := kinds(d, admission.Refuse); !slices.Equal(got, want) {
		t.Fatalf("refusing kinds = %v, want %v; findings:\n%s", got, want, dump(d))
	}
	return d
}

// TestCheckClosureText: the text report says what the closure held and
// what was checked.
func TestCheckClosureText(t *testing.T) {
	fx := newFixture(t, graphAssets, graphPage)
	withGraph(fx)
	fx.write(t)
	d := admission.Check(context.Background(), fx.config(amd64Conf.String()))
	var b strings.Builder
	if err := d.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	if want := "  closure   6 assets: 2 referenced, 4 loaded by them; 6 checked on the CDN\n"; !strings.Contains(b.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, b.String())
	}
}

// TestCheckClosureAttacks: what an attacker (or a broken build) would try.
func TestCheckClosureAttacks(t *testing.T) {
	t.Run("a page references an asset the manifest lacks", func(t *testing.T) {
		fx := newFixture(t, graphAssets, graphPage+`<script src="CDN/js/extra.7777.js"></script>`)
		withGraph(fx)
		fx.cdnFiles["js/extra.7777.js"] = "evil()"
		fx.write(t)
		d := admission.Check(context.Background(), fx.config(amd64Conf.String()))
		if got := kinds(d, admission.Refuse); !slices.Equal(got, []admission.Kind{admission.KindAssetNotInManifest}) {
			t.Errorf("refusing kinds = %v, want asset-not-in-manifest:\n%s", got, dump(d))
		}
		// The closure is of what the manifest knows; the stranger is not in it.
		if d.Closure == nil || d.Closure.Referenced != 2 || d.Closure.Assets != 6 {
			t.Errorf("Closure = %+v", d.Closure)
		}
	})
	t.Run("a loads entry naming a path outside the manifest", func(t *testing.T) {
		fx := newFixture(t, graphAssets, graphPage)
		withGraph(fx)
		fx.m.APIVersion = fx.m.Version()
		raw, err := fx.m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		const good = `"loads":["js/lazy.2222.js","js/worker.3333.js"]`
		if !strings.Contains(string(raw), good) {
			t.Fatalf("the canonical manifest lacks %s:\n%s", good, raw)
		}
		for _, bad := range []string{`"loads":["js/lazy.2222.js","js/gone.js"]`, `"loads":["../../etc/passwd"]`, `"loads":["https://evil.example/x.js"]`, `"loads":["js/app.1111.js"]`} {
			fx.raw = strings.Replace(string(raw), good, bad, 1)
			fx.write(t)
			d := admission.Check(context.Background(), fx.config(amd64Conf.String()))
			if got := kinds(d, admission.Refuse); !slices.Equal(got, []admission.Kind{admission.KindManifestInvalid}) || d.Unverified {
				t.Errorf("%s: refusing kinds = %v (unverified %v), want manifest-invalid:\n%s", bad, got, d.Unverified, dump(d))
			}
		}
	})
	t.Run("loads in a v1 manifest", func(t *testing.T) {
		fx := newFixture(t, graphAssets, graphPage)
		withGraph(fx)
		fx.m.APIVersion = manifest.APIVersionV2
		raw, err := fx.m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		fx.raw = strings.Replace(string(raw), manifest.APIVersionV2, manifest.APIVersion, 1)
		fx.write(t)
		d := admission.Check(context.Background(), fx.config(amd64Conf.String()))
		if got := kinds(d, admission.Refuse); !slices.Equal(got, []admission.Kind{admission.KindManifestInvalid}) {
			t.Errorf("refusing kinds = %v, want manifest-invalid:\n%s", got, dump(d))
		}
	})
}

// TestCheckOnInstance: assets a page references on the instance's own
// origin are checked where a browser fetches them, on the instance, with
// what they load, and on the CDN as well.
func TestCheckOnInstance(t *testing.T) {
	const localPage = `<!doctype html><link rel=stylesheet href="CDN/css/site.4444.css"><script type=module src="/static/js/app.1111.js"></script>`
	serveAll := func(fx *fixture) {
		fx.appFiles = map[string]string{}
		for p, body := range graphAssets {
			fx.appFiles["/static/"+p] = body
		}
	}
	tests := []closureCase{
		// The entry is on the instance: it, its lazy chunk and its worker
		// are checked there; the stylesheet is the CDN's alone.
		{name: "served by the instance and the CDN", instance: 3, cdnChecks: 6},
		{name: "a lazy chunk the instance lacks", edit: func(fx *fixture, c *admission.Config) { delete(fx.appFiles, "/static/js/lazy.2222.js") },
			want: []admission.Kind{admission.KindAssetMissingOnInstance}, subject: "js/lazy.2222.js", instance: 3, cdnChecks: 6},
		// A single-page app's fallback answers index.html for a path it
		// lacks, with a 200: another size, so other bytes.
		{name: "the SPA fallback in place of a worker", edit: func(fx *fixture, c *admission.Config) { fx.appFiles["/static/js/worker.3333.js"] = localPage },
			want: []admission.Kind{admission.KindAssetContentMismatch}, subject: "js/worker.3333.js", instance: 3, cdnChecks: 6},
		// A file whose name carries a content hash, at its size with other
		// bytes: the instance is not the CDN, and its bytes are compared.
		{name: "a hashed chunk at its size with other bytes", edit: func(fx *fixture, c *admission.Config) {
			fx.appFiles["/static/js/worker.3333.js"] = "onmessage = () => []" // the length of graphAssets'
		},
			want: []admission.Kind{admission.KindAssetContentMismatch}, subject: "js/worker.3333.js", instance: 3, cdnChecks: 6},
		{name: "on the instance, missing on the CDN", edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "js/app.1111.js") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}, subject: "js/app.1111.js", instance: 3, cdnChecks: 6},
		{name: "every reference on the instance", page: `<link rel=stylesheet href="/static/css/site.4444.css"><script src="/static/js/app.1111.js"></script>`,
			instance: 6, cdnChecks: 6},
		{name: "over the bound: the references alone on the instance too", edit: func(fx *fixture, c *admission.Config) { c.MaxClosure = 1 },
			want: []admission.Kind{admission.KindClosureTooLarge}, instance: 1, cdnChecks: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := cmp.Or(tt.page, localPage)
			fx := newFixture(t, graphAssets, page)
			withGraph(fx)
			serveAll(fx)
			d := checkRefusing(t, fx, tt.edit, tt.want)
			if tt.subject != "" && !slices.ContainsFunc(d.Findings, func(f admission.Finding) bool { return f.Subject == tt.subject }) {
				t.Errorf("no finding names %s:\n%s", tt.subject, dump(d))
			}
			if d.InstanceChecked != tt.instance || d.CDNChecked != tt.cdnChecks {
				t.Errorf("InstanceChecked = %d, CDNChecked = %d, want %d, %d\n%s", d.InstanceChecked, d.CDNChecked, tt.instance, tt.cdnChecks, dump(d))
			}
			fx.mu.Lock()
			defer fx.mu.Unlock()
			if n := fx.appHits["/static/js/app.1111.js"]; n != 1 {
				t.Errorf("the instance was asked for the entry %d times, want once", n)
			}
		})
	}
}
