package probe_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"
	"golang.org/x/net/html"

	"github.com/lockstep-dev/lockstep/admission/probe"
)

// oracleRule is one place a browser loads a subresource from, as a table:
// an element (of a namespace) and an attribute, read as a URL, a srcset
// or CSS. The oracle is written apart from the probe's extractor (a table
// and an explicit stack, CSS through the grammar parser rather than the
// token stream) so that the two can be compared on the same tree.
type oracleRule struct {
	ns, element  string // element "*": any element of ns
	attrNS, attr string
	kind         string // "url", "srcset", "css"
}

var oracleRules = []oracleRule{
	{"", "script", "", "src", "url"}, {"", "script", "", "data-src", "url"},
	{"", "img", "", "src", "url"}, {"", "img", "", "srcset", "srcset"},
	{"", "img", "", "data-src", "url"}, {"", "img", "", "data-srcset", "srcset"},
	{"", "source", "", "src", "url"}, {"", "source", "", "srcset", "srcset"},
	{"", "source", "", "data-src", "url"}, {"", "source", "", "data-srcset", "srcset"},
	{"", "video", "", "src", "url"}, {"", "video", "", "poster", "url"},
	{"", "audio", "", "src", "url"}, {"", "track", "", "src", "url"},
	{"", "iframe", "", "src", "url"}, {"", "frame", "", "src", "url"}, {"", "embed", "", "src", "url"},
	{"", "object", "", "data", "url"},
	{"", "body", "", "background", "url"}, {"", "table", "", "background", "url"},
	{"", "td", "", "background", "url"}, {"", "th", "", "background", "url"},
	{"", "html", "", "manifest", "url"},
	{"svg", "image", "", "href", "url"}, {"svg", "image", "xlink", "href", "url"},
	{"svg", "use", "", "href", "url"}, {"svg", "use", "xlink", "href", "url"},
	{"svg", "script", "", "href", "url"}, {"svg", "script", "xlink", "href", "url"},
	{"svg", "feImage", "", "href", "url"}, {"svg", "feImage", "xlink", "href", "url"},
	{"", "*", "", "style", "css"}, {"svg", "*", "", "style", "css"}, {"svg", "*", "", "fill", "css"}, {"svg", "*", "", "filter", "css"},
}

// oracle lists the references of doc by the table, plus stylesheet
// links, type=image inputs, import maps and <style> text.
func oracle(page *url.URL, doc *html.Node) []string {
	base := page
	var out []string
	resolve := func(raw string) {
		raw = strings.Trim(raw, " \t\n\r\f")
		raw = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(raw)
		if raw == "" || raw[0] == '#' {
			return
		}
		if strings.ContainsRune(raw, '\\') {
			return // the probe reads backslashes as a browser does; the oracle does not try
		}
		if u, err := base.Parse(raw); err == nil {
			out = append(out, u.String())
		}
	}
	get := func(n *html.Node, ns, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Namespace == ns && a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	// The base: the first <base href> in tree order.
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode && n.Namespace == "" && n.Data == "base" {
			if h, ok := get(n, "", "href"); ok {
				if u, err := page.Parse(strings.TrimSpace(h)); err == nil {
					base = u
				}
				break
			}
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	stack = []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
		if n.Type != html.ElementNode {
			continue
		}
		for _, r := range oracleRules {
			if r.ns != n.Namespace || (r.element != "*" && r.element != n.Data) {
				continue
			}
			v, ok := get(n, r.attrNS, r.attr)
			if !ok {
				continue
			}
			switch r.kind {
			case "url":
				resolve(v)
			case "srcset":
				if !strings.ContainsAny(v, "()") {
					oracleSrcset(v, resolve)
				}
			case "css":
				for _, u := range oracleCSS(v, true) {
					resolve(u)
				}
			}
		}
		text := ""
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				text += c.Data
			}
		}
		switch {
		case n.Namespace == "" && n.Data == "input":
			if t, _ := get(n, "", "type"); strings.EqualFold(strings.TrimSpace(t), "image") {
				if v, ok := get(n, "", "src"); ok {
					resolve(v)
				}
			}
		case n.Namespace == "" && n.Data == "link":
			rel, _ := get(n, "", "rel")
			if strings.Contains(" "+strings.ToLower(strings.Join(strings.Fields(rel), " "))+" ", " stylesheet ") {
				if v, ok := get(n, "", "href"); ok {
					resolve(v)
				}
			}
		case n.Namespace == "" && n.Data == "script":
			if t, _ := get(n, "", "type"); strings.EqualFold(strings.TrimSpace(t), "importmap") {
				var m struct{ Imports map[string]any }
				if json.Unmarshal([]byte(text), &m) == nil {
					for _, v := range m.Imports {
						if s, ok := v.(string); ok {
							resolve(s)
						}
					}
				}
			}
		case (n.Namespace == "" || n.Namespace == "svg") && n.Data == "style":
			for _, u := range oracleCSS(text, false) {
				resolve(u)
			}
		}
	}
	return out
}

// oracleSrcset reads a srcset by whitespace-separated fields: a field
// that starts a candidate is its URL (less leading commas, and trailing
// ones, which end the candidate); a comma in a descriptor ends the
// candidate, and what follows it starts the next.
func oracleSrcset(v string, resolve func(string)) {
	expectURL := true
	var field func(f string)
	field = func(f string) {
		if expectURL {
			f = strings.TrimLeft(f, ",")
			if f == "" {
				return
			}
			if strings.HasSuffix(f, ",") {
				resolve(strings.TrimRight(f, ","))
				return
			}
			resolve(f)
			expectURL = false
			return
		}
		if i := strings.IndexByte(f, ','); i >= 0 {
			expectURL = true
			field(f[i+1:])
		}
	}
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' }) {
		field(f)
	}
}

// oracleCSS reads url() tokens and @import strings with the grammar
// parser; URLs with escapes are left to the probe.
func oracleCSS(text string, inline bool) []string {
	p := css.NewParser(parse.NewInputString(text), inline)
	var out []string
	add := func(tt css.TokenType, data []byte) {
		s := string(data)
		if strings.ContainsRune(s, '\\') {
			return
		}
		switch tt {
		case css.URLToken:
			s = strings.TrimSuffix(s[strings.IndexByte(s, '(')+1:], ")")
			s = strings.Trim(s, " \t\n\r\f")
			out = append(out, oracleUnquote(s))
		}
	}
	for i := 0; i < 100000; i++ {
		gt, tt, data := p.Next()
		switch gt {
		case css.ErrorGrammar:
			return out
		case css.TokenGrammar:
			// A token outside a rule's prelude or a declaration: Values()
			// still holds the previous rule's, so read the token itself.
			add(tt, data)
		case css.AtRuleGrammar:
			// Of the at-rules' preludes only @import's loads.
			if !bytes.EqualFold(data, []byte("@import")) {
				continue
			}
			// Its first value is the URL, a string or url().
			for _, v := range p.Values() {
				if v.TokenType == css.WhitespaceToken || v.TokenType == css.CommentToken {
					continue
				}
				if v.TokenType == css.StringToken && !bytes.ContainsRune(v.Data, '\\') {
					out = append(out, oracleUnquote(string(v.Data)))
				}
				add(v.TokenType, v.Data)
				break
			}
		case css.DeclarationGrammar:
			for _, v := range p.Values() {
				add(v.TokenType, v.Data)
			}
		}
	}
	return out
}

// oracleUnquote removes a string's quotes; an unterminated string ends at
// EOF.
func oracleUnquote(s string) string {
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		return strings.TrimSuffix(s[1:], s[:1])
	}
	return s
}

// FuzzExtract: Parse never panics, Map never yields an empty asset ID,
// and every reference the oracle finds on the same parsed tree is among
// the probe's.
func FuzzExtract(f *testing.F) {
	for _, seed := range []string{
		`<img srcset="a.png 1x, b.png 2x"><script src="x.js">`,
		`<link rel="icon preload" imagesrcset=",,, a(1), b">`,
		`<base href="https://cdn.example.com/static/"><svg><image xlink:href="i.svg"/><use href="#x"/></svg>`,
		`<style>@import "a.css"; @namespace url(http://www.w3.org/1999/xhtml); b{background:url( 'c.png' )}</style>`,
		`<div style="background:url(d.png)"></div><table background=t.png><td background=u.png>`,
		`<script type=importmap>{"imports":{"a":"/a.js"}}</script><input type=image src=go.png>`,
		`<iframe srcdoc="<img src=x.png>"></iframe><noscript><img src=n.png></noscript><template><img src=t.png></template>`,
		`<meta http-equiv=refresh content="0;url=/next"><video poster=p.jpg><source src=v.webm><track src=t.vtt></video>`,
		`<script nomodule id="vite-legacy-entry" data-src="/assets/index-legacy-1a.js">System.import(x)</script><img data-src=l.png data-srcset="l2.png 2x">`,
	} {
		f.Add("text/html", seed)
	}
	f.Add("application/json", `{"assets":["a"]}`)
	f.Add("application/json", `{"index.html":{"file":"assets/a.js","imports":["_b.js"]},"_b.js":{"file":"assets/b.js"}}`)
	f.Add("application/json", `{"main.js":"/static/js/main.1a.js","entrypoints":{"main":{"assets":{"js":[{"src":"x.js"}]}}}}`)
	u, _ := url.Parse("http://127.0.0.1:8080/app/")
	f.Fuzz(func(t *testing.T, ct, body string) {
		p, err := probe.Parse(u, ct, []byte(body))
		if err == nil {
			for _, id := range probe.Map([]*probe.Page{p}, cdn).IDs {
				if id == "" {
					t.Fatalf("empty asset ID from %q", body)
				}
			}
		}
		doc, err := html.Parse(strings.NewReader(body))
		if err != nil {
			return
		}
		found := map[string]bool{}
		for _, r := range probe.Extract(u, doc) {
			found[r.URL] = true
		}
		for _, want := range oracle(u, doc) {
			if !found[want] {
				t.Fatalf("the oracle finds %q in\n%s\nthe probe does not: %v", want, body, found)
			}
		}
	})
}
