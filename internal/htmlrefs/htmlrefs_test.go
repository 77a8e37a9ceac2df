package htmlrefs_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/htmlrefs"
)

// TestTable: every element and attribute of the table, each alone.
func TestTable(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // URL, with " ?" appended for a Maybe
	}{
		{"script src and data-src", `<script src=a.js></script><script nomodule data-src=b.js>x</script>`, []string{"a.js", "b.js"}},
		{"link rels", `<link rel=stylesheet href=s.css><link rel=preload as=font href=f.woff2><link rel=modulepreload href=m.js>` +
			`<link rel=prefetch href=p.js><link rel="shortcut icon" href=i.ico><link rel=apple-touch-icon href=t.png>` +
			`<link rel=apple-touch-startup-image href=st.png><link rel=mask-icon href=mk.svg><link rel=manifest href=app.webmanifest>` +
			`<link rel=canonical href=c.html><link rel=alternate href=alt.xml><link rel=preconnect href=//cdn>`,
			[]string{"s.css", "f.woff2", "m.js", "p.js", "i.ico", "t.png", "st.png", "mk.svg", "app.webmanifest"}},
		{"preload of data or a page is a maybe", `<link rel=preload as=fetch href=/api/x><link rel=prefetch as=document href=next.html><link rel=prerender href=pr.html>`,
			[]string{"/api/x ?", "next.html ?", "pr.html ?"}},
		{"link imagesrcset", `<link rel=preload as=image imagesrcset="h1.png 1x, h2.png 2x">`, []string{"h1.png", "h2.png"}},
		{"img, picture, source", `<picture><source srcset="a.avif" type=image/avif><img src=a.png srcset="a2.png 2x"></picture>`, []string{"a.avif", "a.png", "a2.png"}},
		{"media", `<video src=v.mp4 poster=p.jpg><source src=v.webm><track src=t.vtt></video><audio src=a.mp3></audio>`,
			[]string{"v.mp4", "p.jpg", "v.webm", "t.vtt", "a.mp3"}},
		{"embed, object, iframe, frame", `<embed src=e.swf><object data=o.svg></object><iframe src=if.html></iframe>`, []string{"e.swf", "o.svg", "if.html"}},
		{"input type image only", `<input type=image src=go.png><input type=text src=no.png>`, []string{"go.png"}},
		{"base is read apart", `<base href="/app/"><img src=x.png>`, []string{"x.png"}},
		{"meta refresh is a load of the page", `<meta http-equiv=refresh content="0; url=next.html">`, []string{"next.html"}},
		{"inline svg", `<svg><image href=i.png /><use xlink:href="sprite.svg#a"/><script href=s.js></script><filter><feImage href=f.png /></filter><a href=nav.html>x</a><use href="#local"/></svg>`,
			[]string{"i.png", "sprite.svg#a", "s.js", "f.png"}},
		{"svg style and presentation attributes", `<svg><style>.a{fill:url(g.svg#x)}</style><rect mask="url(m.svg#m)"/></svg>`, []string{"g.svg#x", "m.svg#m"}},
		{"astro island", `<astro-island uid="1" component-url="/_astro/Counter.B1.js" renderer-url="/_astro/client.C2.js" props="{&quot;a&quot;:[0,1]}" ssr client="load"></astro-island>`,
			[]string{"/_astro/Counter.B1.js ?", "/_astro/client.C2.js ?"}},
		{"custom element words are no URLs", `<my-el label="hello world" mode="dark" data='{"x":"/a.js"}'></my-el>`, nil},
		{"speculation rules", `<script type=speculationrules>{"prefetch":[{"source":"list","urls":["/next.html"]}]}</script>`, []string{"/next.html ?"}},
		{"noscript and srcdoc", `<noscript><img src=n.png></noscript><iframe srcdoc="<img src=sd.png>"></iframe>`, []string{"n.png", "sd.png"}},
		{"fragments are the document", `<img src="#x"><svg><use href="#y"/></svg>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := htmlrefs.Parse(strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range d.Refs {
				s := r.URL
				if r.Kind == htmlrefs.Maybe {
					s += " ?"
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Parse(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestBaseAndScripts(t *testing.T) {
	d, err := htmlrefs.Parse(strings.NewReader(`<img src=a.png><base href=" /v2/ "><base href=/other/><script>import("./x.js")</script><script type=importmap>{"imports":{"a":"/a.js"}}</script><script src=s.js>ignored()</script>`))
	if err != nil {
		t.Fatal(err)
	}
	if !d.HasBase || d.Base != "/v2/" {
		t.Errorf("Base = %q (%v), want /v2/", d.Base, d.HasBase)
	}
	if want := []string{`import("./x.js")`}; !slices.Equal(d.Scripts, want) {
		t.Errorf("Scripts = %q, want %q", d.Scripts, want)
	}
}

// TestSrcset: HTML's "parse a srcset attribute": commas inside URLs,
// trailing commas, descriptors with parentheses (which do not nest).
func TestSrcset(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a.png", []string{"a.png"}},
		{"a.png 1x, b.png 2x", []string{"a.png", "b.png"}},
		{"a,b.png 1x,c.png 2x", []string{"a,b.png", "c.png"}},
		{"a.png,, b.png", []string{"a.png", "b.png"}},
		{" ,,a.png 100w ,b.png 200w", []string{"a.png", "b.png"}},
		{"data:image/png;base64,AAA= 1x, c.png 2x", []string{"data:image/png;base64,AAA=", "c.png"}},
		{"a.png 1x (x, y), b.png", []string{"a.png", "b.png"}},
		{"a.png 1x ((x), b.png", []string{"a.png", "b.png"}},
		{"a.png 1x (unclosed, b.png", []string{"a.png"}},
		{"a.png 1x 2x, b.png", []string{"a.png", "b.png"}},
		{"", nil},
		{" , , ", nil},
	}
	for _, tt := range tests {
		if got := htmlrefs.Srcset(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Srcset(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSVG: an SVG file read as XML, prefixes resolved as a browser does.
func TestSVG(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
		bad        bool
	}{
		{"image, use, script, feImage", `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">` +
			`<image href="i.png"/><use xlink:href="s.svg#a"/><script href="s.js"/><filter><feImage xlink:href="f.png"/></filter><use href="#local"/></svg>`,
			[]string{"i.png", "s.svg#a", "s.js", "f.png"}, false},
		{"another prefix for xlink", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:l="http://www.w3.org/1999/xlink"><image l:href="p.png"/></svg>`, []string{"p.png"}, false},
		{"an href in no namespace of SVG's is not read", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:o="urn:other"><image o:href="no.png"/><o:image href="no2.png"/></svg>`, nil, false},
		{"style in CDATA and attributes", `<svg xmlns="http://www.w3.org/2000/svg"><style><![CDATA[@import "i.css"; .a{fill:url(g.svg#x)}]]></style><rect style="fill:url(h.png)" filter="url(fl.svg#f)"/></svg>`,
			[]string{"i.css", "g.svg#x", "h.png", "fl.svg#f"}, false},
		{"foreignObject html", `<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><img xmlns="http://www.w3.org/1999/xhtml" src="fo.png"/></foreignObject></svg>`, []string{"fo.png"}, false},
		{"not well-formed: read up to the error", `<svg xmlns="http://www.w3.org/2000/svg"><image href="a.png"/><image href="b.png"></svg>`, []string{"a.png", "b.png"}, true},
		{"truncated", `<svg xmlns="http://www.w3.org/2000/svg"><image href="a.png"/>`, []string{"a.png"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := htmlrefs.SVG([]byte(tt.body))
			if (err != nil) != tt.bad {
				t.Errorf("SVG error = %v, want an error: %v", err, tt.bad)
			}
			var got []string
			for _, r := range d.Refs {
				got = append(got, r.URL)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("SVG(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}
