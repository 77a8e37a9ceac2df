package probe_test

import (
	"bytes"
	"context"
	"net/url"
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/admission/probe"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/htmlrefs"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/assets/graph"
)

// agreeFiles are the files of the release the agreement is judged on,
// beside index.html.
var agreeFiles = []string{"a.png", "b.js", "c.css", "sub/d.svg", "e,f.png", "g h.png", "_astro/island.js", "icons/i.png", "next.html", "v/w.webp"}

const agreeCDN = "https://cdn.example/app/"

// agreeOn returns what the probe and the graph say index.html (body)
// loads of agreeFiles, and whether the page has inline scripts (which
// the graph reads and the probe does not).
func agreeOn(t testing.TB, body string) (probeIDs, graphLoads []string, scripts bool) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"index.html": body}
	for _, f := range agreeFiles {
		files[f] = "x"
	}
	if err := scenario.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	h, err := assets.Hash(context.Background(), assets.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graph.Build(context.Background(), h.Files, graph.Options{Dir: dir, CDN: []string{agreeCDN}}); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, f := range h.Files {
		known[f.Path] = true
		if f.Path == "index.html" {
			graphLoads = f.Loads
		}
	}
	page, _ := url.Parse("https://127.0.0.1:8443/index.html")
	p, err := probe.Parse(page, "text/html", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	m := probe.Map([]*probe.Page{p}, []string{agreeCDN})
	for _, id := range append(m.IDs, m.Maybe...) {
		if known[id] && id != "index.html" {
			probeIDs = append(probeIDs, id)
		}
	}
	slices.Sort(probeIDs)
	d, err := htmlrefs.Parse(bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	return probeIDs, graphLoads, len(d.Scripts) > 0
}

// TestProbeAndGraphAgree: for each class of the shared table, the boot
// gate's probe and the asset graph name the same files of the release.
func TestProbeAndGraphAgree(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"script and link", `<script src=b.js></script><link rel=stylesheet href=c.css><link rel=apple-touch-startup-image href=icons/i.png>`, []string{"b.js", "c.css", "icons/i.png"}},
		{"srcset with a comma in a URL", `<img srcset="e,f.png 1x, a.png 2x">`, []string{"a.png", "e,f.png"}},
		{"srcset descriptors in parentheses", `<img srcset="a.png 1x ((x), v/w.webp 2x">`, []string{"a.png", "v/w.webp"}},
		{"a space, escaped", `<img src="g%20h.png">`, []string{"g h.png"}},
		{"base href applies to what follows and precedes", `<img src=w.webp><base href="/v/">`, []string{"v/w.webp"}},
		{"base on the CDN", `<base href="https://cdn.example/app/icons/"><img src=i.png>`, []string{"icons/i.png"}},
		{"inline svg", `<svg><image href="a.png"/><use xlink:href="sub/d.svg#x"/></svg>`, []string{"a.png", "sub/d.svg"}},
		{"astro island", `<astro-island component-url="/_astro/island.js" props="{}"></astro-island>`, []string{"_astro/island.js"}},
		{"preload of a page", `<link rel=prefetch as=document href=next.html>`, []string{"next.html"}},
		{"backslashes", `<img src="\v\w.webp">`, []string{"v/w.webp"}},
		{"tabs inside", "<img src=\"a\t.png\">", []string{"a.png"}},
		{"nothing", `<a href=a.png>a link is no load</a>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, g, _ := agreeOn(t, tt.body)
			if !slices.Equal(p, tt.want) || !slices.Equal(g, tt.want) {
				t.Errorf("%s:\nprobe %q\ngraph %q\nwant  %q", tt.body, p, g, tt.want)
			}
		})
	}
}

// FuzzAgree: on any page, every file of the release the probe names is
// one the graph names, and without inline scripts (which the graph reads
// as JavaScript and the probe does not) the two are the same.
func FuzzAgree(f *testing.F) {
	for _, s := range []string{
		`<img srcset="e,f.png 1x, a.png 2x"><script src=b.js></script>`,
		`<base href="/v/"><img src=w.webp><link rel=icon href=../a.png>`,
		`<svg><image href="a.png"/><style>.x{fill:url(sub/d.svg#g)}</style></svg><p style="background:url(c.css)">`,
		`<astro-island component-url="/_astro/island.js"></astro-island><noscript><img src=a.png></noscript>`,
		`<iframe srcdoc="<img src=v/w.webp>"></iframe><meta http-equiv=refresh content="0;url=next.html">`,
		`<link rel=preload as=fetch href=b.js><script type=importmap>{"imports":{"x":"./b.js"}}</script>`,
		`<script>import("./b.js")</script><img src=a.png>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p, g, scripts := agreeOn(t, body)
		for _, id := range p {
			if !slices.Contains(g, id) {
				t.Fatalf("the probe names %s in\n%s\nthe graph does not: %q", id, body, g)
			}
		}
		if !scripts && !slices.Equal(p, g) {
			t.Fatalf("on\n%s\nthe probe names %q, the graph %q", body, p, g)
		}
	})
}
