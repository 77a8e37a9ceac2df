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
