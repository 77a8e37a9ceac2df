package probe

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/cssurl"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxNesting bounds the documents parsed inside a document (iframe
// srcdoc, noscript), each of which may hold more.
const maxNesting = 4

// assetRels are the link relations whose href is an asset.
var assetRels = map[string]bool{
	"stylesheet": true, "preload": true, "modulepreload": true, "prefetch": true, "icon": true,
	"shortcut": true, "apple-touch-icon": true, "apple-touch-icon-precomposed": true,
	"mask-icon": true, "manifest": true,
}

// metaURLs are the names of the meta elements whose content is a URL a
// browser loads.
var metaURLs = map[string]bool{"msapplication-tileimage": true, "msapplication-config": true}

// svgURLAttrs are the SVG presentation attributes whose value may hold a
// CSS url() of another document.
var svgURLAttrs = []string{"fill", "stroke", "filter", "mask", "clip-path", "marker-start", "marker-mid", "marker-end", "cursor"}

// Extract returns the references of a parsed HTML document fetched from
// page, in document order, each once (see the package documentation for
// what is read).
func Extract(page *url.URL, doc *html.Node) []Reference {
	x := &extractor{base: documentBase(page, doc), seen: map[string]bool{}}
	x.walk(doc, 0)
	return x.refs
}

type extractor struct {
	base *url.URL
	refs []Reference
	seen map[string]bool
}

// documentBase is the document's base URL: the first <base href> in tree
// order, resolved against the page, else the page.
func documentBase(page *url.URL, doc *html.Node) *url.URL {
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Namespace == "" && n.DataAtom == atom.Base {
			if h, ok := attr(n, "", "href"); ok {
				if u, err := page.Parse(strings.TrimSpace(h)); err == nil {
					return u
				}
				return page
			}
		}
	}
	return page
}

func attr(n *html.Node, ns, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == ns && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// text is the text content of n's children.
func text(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// add records a reference. A fragment-only reference ("#x") is the
// document itself, not a load.
func (x *extractor) add(where, raw string) {
	raw = strings.Trim(raw, " \t\n\r\f")
	if raw == "" || strings.HasPrefix(raw, "#") {
		return
	}
	raw = browserURL(x.base, raw)
	r := Reference{Where: where, URL: raw}
	if u, err := x.base.Parse(raw); err == nil {
		r.URL = u.String()
	}
	if !x.seen[r.URL] {
		x.seen[r.URL] = true
		x.refs = append(x.refs, r)
	}
}

var stripTabsNewlines = strings.NewReplacer("\t", "", "\n", "", "\r", "")

// browserURL is raw as a browser's URL parser reads it before resolving:
// without ASCII tabs and newlines, and, for http(s) (a "special" scheme,
// given or inherited from the base), with backslashes read as slashes.
func browserURL(base *url.URL, raw string) string {
	raw = stripTabsNewlines.Replace(raw)
	scheme := strings.ToLower(base.Scheme)
	if i := strings.IndexAny(raw, ":/\\?#"); i > 0 && raw[i] == ':' {
		scheme = strings.ToLower(raw[:i])
	}
	if scheme == "http" || scheme == "https" {
		raw = strings.ReplaceAll(raw, "\\", "/")
	}
	return raw
}

func (x *extractor) addAttr(n *html.Node, ns, key, where string) {
	if v, ok := attr(n, ns, key); ok {
		x.add(where, v)
	}
}

func (x *extractor) addSrcset(n *html.Node, key, where string) {
	if v, ok := attr(n, "", key); ok {
		for _, c := range srcset(v) {
			x.add(where, c)
		}
	}
}

func (x *extractor) addCSS(where, text string) {
	for _, r := range cssurl.Refs(text) {
		w := where
		if r.Import {
			w = WhereImport
		}
		x.add(w, r.URL)
	}
}

// The Where of references that are stylesheets, which Fetch reads in turn.
const (
	WhereStylesheet = "link stylesheet href"
	WhereImport     = "css @import"
)

func (x *extractor) walk(n *html.Node, nesting int) {
	if n.Type == html.ElementNode {
		x.element(n, nesting)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		x.walk(c, nesting)
	}
}

func (x *extractor) element(n *html.Node, nesting int) {
	if v, ok := attr(n, "", "style"); ok {
		x.addCSS(n.Data+" style", v)
	}
	switch n.Namespace {
	case "svg":
		x.svg(n)
		return
	case "":
	default:
		return // MathML loads nothing
	}
	name := n.Data
	switch n.DataAtom {
	case atom.Script:
		x.addAttr(n, "", "src", "script src")
		// @vitejs/plugin-legacy's entry: <script nomodule
		// id="vite-legacy-entry" data-src="…">System.import(…)</script>,
		// which the inline code loads in a browser without modules.
		x.addAttr(n, "", "data-src", "script data-src")
		if t, _ := attr(n, "", "type"); strings.EqualFold(strings.TrimSpace(t), "importmap") {
			x.importMap(text(n))
		}
	case atom.Link:
		rel, _ := attr(n, "", "rel")
		asset, sheet := false, false
		for _, r := range strings.Fields(strings.ToLower(rel)) {
			asset = asset || assetRels[r]
			sheet = sheet || r == "stylesheet"
		}
		// A preload of data (as=fetch) or of a page is not a static
		// asset.
		if as, _ := attr(n, "", "as"); !sheet && (strings.EqualFold(as, "fetch") || strings.EqualFold(as, "document")) {
			asset = false
		}
		if !asset {
			return
		}
		where := "link href"
		if sheet {
			where = WhereStylesheet
		}
		x.addAttr(n, "", "href", where)
		x.addSrcset(n, "imagesrcset", "link imagesrcset")
	case atom.Img, atom.Source:
		x.addAttr(n, "", "src", name+" src")
		x.addSrcset(n, "srcset", name+" srcset")
		// What lazy-loading scripts (lazysizes, vanilla-lazyload, lozad)
		// move into src and srcset when the image nears the viewport.
		x.addAttr(n, "", "data-src", name+" data-src")
		x.addSrcset(n, "data-srcset", name+" data-srcset")
	case atom.Video:
		x.addAttr(n, "", "src", "video src")
		x.addAttr(n, "", "poster", "video poster")
	case atom.Audio, atom.Track, atom.Embed, atom.Frame:
		x.addAttr(n, "", "src", name+" src")
	case atom.Iframe:
		x.addAttr(n, "", "src", "iframe src")
		if v, ok := attr(n, "", "srcdoc"); ok && nesting < maxNesting {
			x.nested(v, nil, nesting)
		}
	case atom.Input:
		if t, _ := attr(n, "", "type"); strings.EqualFold(strings.TrimSpace(t), "image") {
			x.addAttr(n, "", "src", "input src")
		}
	case atom.Object:
		x.addAttr(n, "", "data", "object data")
	case atom.Body, atom.Table, atom.Td, atom.Th:
		x.addAttr(n, "", "background", name+" background")
	case atom.Html:
		x.addAttr(n, "", "manifest", "html manifest")
	case atom.Meta:
		if h, _ := attr(n, "", "http-equiv"); strings.EqualFold(strings.TrimSpace(h), "refresh") {
			if c, ok := attr(n, "", "content"); ok {
				if u := refreshURL(c); u != "" {
					x.add("meta refresh", u)
				}
			}
		}
		// The Windows tile icon and its browserconfig.xml, which favicon
		// plugins (favicons-webpack-plugin, vite-plugin-favicons) emit.
		if m, _ := attr(n, "", "name"); metaURLs[strings.ToLower(strings.TrimSpace(m))] {
			if c, _ := attr(n, "", "content"); !strings.EqualFold(strings.TrimSpace(c), "none") {
				x.add("meta "+strings.ToLower(strings.TrimSpace(m)), c)
			}
		}
	case atom.Style:
		x.addCSS("style", text(n))
	case atom.Noscript:
		// Parsed with scripting on, a noscript's content is text; a
		// browser without scripts loads what it holds.
		if nesting < maxNesting {
			x.nested(text(n), n, nesting)
		}
	}
}

// svg reads an SVG element: href and xlink:href (on every element but a
// link, <a>: script, image, use, feImage, and the paint servers and
// filters another document may hold), its <style>, and the presentation
// attributes that take url().
func (x *extractor) svg(n *html.Node) {
	name := n.Data
	if name != "a" {
		x.addAttr(n, "", "href", "svg "+name+" href")
		x.addAttr(n, "xlink", "href", "svg "+name+" xlink:href")
	}
	if name == "style" {
		x.addCSS("svg style", text(n))
	}
	for _, k := range svgURLAttrs {
		if v, ok := attr(n, "", k); ok {
			x.addCSS("svg "+name+" "+k, v)
		}
	}
}

// nested parses markup inside the document (an iframe's srcdoc, a
// noscript's content) and reads it with the document's base.
func (x *extractor) nested(markup string, context *html.Node, nesting int) {
	if strings.TrimSpace(markup) == "" {
		return
	}
	if context == nil {
		doc, err := html.Parse(strings.NewReader(markup))
		if err == nil {
			x.walk(doc, nesting+1)
		}
		return
	}
	ctx := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(markup), ctx)
	if err != nil {
		return
	}
	for _, c := range nodes {
		x.walk(c, nesting+1)
	}
}

// importMap reads an import map's addresses: the values of "imports" and
// of every scope of "scopes". A map that is not JSON is ignored by a
// browser, and loads nothing.
func (x *extractor) importMap(text string) {
	var m struct {
		Imports map[string]any            `json:"imports"`
		Scopes  map[string]map[string]any `json:"scopes"`
	}
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return
	}
	addAll := func(specs map[string]any) {
		keys := make([]string, 0, len(specs))
		for k := range specs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := specs[k].(string); ok {
				x.add("importmap", s)
			}
		}
	}
	addAll(m.Imports)
	scopes := make([]string, 0, len(m.Scopes))
	for k := range m.Scopes {
		scopes = append(scopes, k)
	}
	sort.Strings(scopes)
	for _, k := range scopes {
		addAll(m.Scopes[k])
	}
}

// refreshURL is the URL of a meta refresh's content ("5; url=/next"), as
// HTML's "shared declarative refresh steps" read it; empty when it names
// none (a reload of the page itself).
func refreshURL(content string) string {
	s := strings.TrimLeft(content, " \t\n\r\f")
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return ""
	}
	s = strings.TrimLeft(s[i:], " \t\n\r\f")
	if s == "" {
		return ""
	}
	if s[0] != ';' && s[0] != ',' {
		return ""
	}
	s = strings.TrimLeft(s[1:], " \t\n\r\f")
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		rest := strings.TrimLeft(s[3:], " \t\n\r\f")
		if strings.HasPrefix(rest, "=") {
			s = strings.TrimLeft(rest[1:], " \t\n\r\f")
		}
	}
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		s = s[1:]
		if j := strings.IndexByte(s, q); j >= 0 {
			s = s[:j]
		}
	}
	return strings.TrimSpace(s)
}

// srcset returns the URLs of a srcset attribute (HTML's "parse a srcset
// attribute", without the descriptors).
func srcset(v string) []string {
	var out []string
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
	i := 0
	for i < len(v) {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		start := i
		for i < len(v) && !isSpace(v[i]) {
			i++
		}
		u := v[start:i]
		trailing := strings.HasSuffix(u, ",")
		u = strings.TrimRight(u, ",")
		if u != "" {
			out = append(out, u)
		}
		if trailing {
			continue
		}
		// Skip the descriptors up to the next comma outside parentheses.
		depth := 0
		for i < len(v) {
			c := v[i]
			if c == '(' {
				depth++
			} else if c == ')' && depth > 0 {
				depth--
			} else if c == ',' && depth == 0 {
				break
			}
			i++
		}
	}
	return out
}
