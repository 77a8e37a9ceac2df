package probe_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/lockstep-dev/lockstep/admission/probe"
)

func TestExtract(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"css url forms", `<style>a{b:url(a.png);c:url( "b.png" );d:URL('c.png')}</style>`, []string{"a.png", "b.png", "c.png"}},
		{"css escapes", `<style>a{b:\75 rl(e.png);c:url("f\2e png");d:u\rl(g.png)}</style>`, []string{"e.png", "f.png", "g.png"}},
		{"@import forms", `<style>@import "i.css"; @import url(j.css) screen; @IMPORT 'k.css';</style>`, []string{"i.css", "j.css", "k.css"}},
		{"@namespace is a name", `<style>@namespace svg url(http://www.w3.org/2000/svg); a{b:url(n.png)}</style>`, []string{"n.png"}},
		{"image-set and image strings", `<style>a{b:image-set("s1.png" 1x, url(s2.png) 2x);c:image("s3.png")}</style>`, []string{"s1.png", "s2.png", "s3.png"}},
		{"a comment hides nothing and shows nothing", `<style>/* url(no.png) */a{b:url(yes.png)}</style>`, []string{"yes.png"}},
		{"style attribute", `<p style="background:url(p.png)">`, []string{"p.png"}},
		{"meta refresh forms", `<meta http-equiv=refresh content="5;URL=r1.html"><meta http-equiv=REFRESH content="0, 'r2.html'"><meta http-equiv=refresh content="3">`, []string{"r1.html", "r2.html"}},
		{"srcdoc is a document", `<iframe srcdoc="<img src=sd.png><style>a{b:url(sd.css)}</style>"></iframe>`, []string{"sd.png", "sd.css"}},
		{"svg fragments are the document", `<svg><use href="#a"/><rect fill="url(#g)"/><image href="i.png"/></svg>`, []string{"i.png"}},
		{"first base wins, wherever it is", `<img src="x.png"><base href="/sub/"><base href="/other/">`, []string{"sub/x.png"}},
		{"script text is not read", `<script>new Image().src = "no.png"</script><script src="s.js"></script>`, []string{"s.js"}},
		{"vite legacy entry and polyfill", `<script type="module" crossorigin src="/assets/index-D1.js"></script><link rel="modulepreload" crossorigin href="/assets/vendor-E2.js">` +
			`<script nomodule>!function(){var e=document,t=e.createElement("script");}();</script>` +
			`<script nomodule crossorigin id="vite-legacy-polyfill" src="/assets/polyfills-legacy-F3.js"></script>` +
			`<script nomodule crossorigin id="vite-legacy-entry" data-src="/assets/index-legacy-G4.js">System.import(document.getElementById('vite-legacy-entry').getAttribute('data-src'))</script>`,
			[]string{"assets/index-D1.js", "assets/vendor-E2.js", "assets/polyfills-legacy-F3.js", "assets/index-legacy-G4.js"}},
		{"html-webpack-plugin's links", `<link rel="icon" href="/favicon.ico"><link rel="preload" as="font" type="font/woff2" crossorigin href="/static/media/a.1b.woff2">` +
			`<link rel="prefetch" as="script" href="/static/js/lazy.2c.js"><link rel="manifest" href="/manifest.webmanifest"><link href="/static/css/main.3d.css" rel="stylesheet"><script defer="defer" src="/static/js/main.4e.js"></script>`,
			[]string{"favicon.ico", "static/media/a.1b.woff2", "static/js/lazy.2c.js", "manifest.webmanifest", "static/css/main.3d.css", "static/js/main.4e.js"}},
		{"lazy-loaded images", `<img class="lazyload" src="data:image/gif;base64,R0lGOD" data-src="l1.png" data-srcset="l2.png 2x, l3.png 3x"><picture><source data-srcset="l4.webp"></picture>`,
			[]string{"data:image/gif;base64,R0lGOD", "l1.png", "l2.png", "l3.png", "l4.webp"}},
		{"windows tile meta", `<meta name="msapplication-TileImage" content="/mstile-144.png"><meta name="msapplication-config" content="/browserconfig.xml"><meta name="msapplication-config" content="none"><meta name="og:image" content="/og.png">`,
			[]string{"mstile-144.png", "browserconfig.xml"}},
		{"importmap scopes", `<script type=importmap>{"imports":{"a":"a.js"},"scopes":{"/s/":{"b":"b.js"}}}</script>`, []string{"a.js", "b.js"}},
	}
	page, _ := url.Parse("http://127.0.0.1:8080/")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := html.Parse(strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range probe.Extract(page, doc) {
				got = append(got, strings.TrimPrefix(r.URL, "http://127.0.0.1:8080/"))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Extract(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}
