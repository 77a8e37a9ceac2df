package cssurl

import (
	"slices"
	"testing"
)

func TestRefs(t *testing.T) {
	for _, tc := range []struct {
		css  string
		want []Ref
	}{
		{`@font-face{src:url(/assets/f-vG0SWmOK.woff2) format("woff2")}body{background:url( 'a.png' )}`,
			[]Ref{{URL: "/assets/f-vG0SWmOK.woff2"}, {URL: "a.png"}}},
		{`@import "base.css"; @import url(theme.css) screen;`, []Ref{{URL: "base.css", Import: true}, {URL: "theme.css", Import: true}}},
		{`@namespace svg url(http://www.w3.org/2000/svg); a{b:image-set("x.png" 1x, url(y.png) 2x)}`, []Ref{{URL: "x.png"}, {URL: "y.png"}}},
		{`a{b:\75 rl(esc.png)} /* url(comment.png) */ c{d:"url(string.png)"}`, []Ref{{URL: "esc.png"}}},
		{`a{b:url(bad url.png)}`, nil},
	} {
		if got := Refs(tc.css); !slices.Equal(got, tc.want) {
			t.Errorf("Refs(%q) = %+v, want %+v", tc.css, got, tc.want)
		}
	}
}
