package htmlrefs

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/lockstep-dev/lockstep/internal/cssurl"
)

// Kind says how sure a reference is to be loaded.
type Kind int

const (
	// Load: a browser fetches it when it reads the document.
	Load Kind = iota
	// Stylesheet: a link rel=stylesheet; its own references load in turn.
	Stylesheet
	// Import: a CSS @import, a stylesheet too.
	Import
	// Maybe: fetched only under conditions the document alone does not
	// settle, or by a script that reads the attribute (a custom element's
	// URL-valued attribute, a preload or prefetch of data or of a page,
	// speculation rules). A reader keeps it only when it names a file of
	// the release; one that names nothing of the release is no finding.
	Maybe
)

// Ref is one reference of a document, as written: trimmed of ASCII white
// space, not resolved (Doc.Base applies to it).
type Ref struct {
	// Where names the element and attribute that hold it ("script src").
	Where string
	URL   string
	Kind  Kind
}

// Doc is what a document makes a browser load.
type Doc struct {
	// Base is the href of the first <base> in tree order, as written
	// (HasBase: there is one). Every relative reference of the document,
	// before or after it, resolves against it.
	Base    string
	HasBase bool
	// Refs are the references in document order (each element's in the
	// order of the table), repeats included, fragment-only ones ("#x": the
	// document itself) left out.
	Refs []Ref
	// Scripts are the texts of the inline scripts, in order: code the
	// table does not read (a reader of JavaScript may). Import maps and
	// speculation rules are read here and are not among them.
	Scripts []string
}

// maxNesting bounds the documents parsed inside a document (iframe
// srcdoc, noscript), each of which may hold more.
const maxNesting = 4

// linkRels are the link relations whose href (and imagesrcset) a browser
// loads as it reads the document.
var linkRels = map[string]bool{
	"stylesheet": true, "preload": true, "modulepreload": true, "prefetch": true,
	"icon": true, "shortcut": true, "apple-touch-icon": true, "apple-touch-icon-precomposed": true,
	"apple-touch-startup-image": true, "mask-icon": true, "fluid-icon": true, "manifest": true,
}

// maybeRels are the link relations whose href a browser may fetch (a
// prerender, a compression dictionary): kept when they name a release
// file.
var maybeRels = map[string]bool{"prerender": true, "compression-dictionary": true, "dictionary": true}

// metaURLs are the names of the meta elements whose content is a URL a
// browser loads: the Windows tile icon and its browserconfig.xml, which
// favicon plugins emit.
var metaURLs = map[string]bool{"msapplication-tileimage": true, "msapplication-config": true}

// svgURLAttrs are the SVG presentation attributes whose value may hold a
// CSS url() of another document.
var svgURLAttrs = []string{"fill", "stroke", "filter", "mask", "clip-path", "marker-start", "marker-mid", "marker-end", "cursor"}

// Parse parses an HTML document as a browser does (golang.org/x/net/html)
// and returns what it makes a browser load.
func Parse(r io.Reader) (*Doc, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return nil, err
	}
	return Extract(doc), nil
}

// Extract returns what a parsed document makes a browser load; see the
// package documentation for the table.
func Extract(doc *html.Node) *Doc {
	x := &extractor{d: &Doc{}}
	x.d.Base, x.d.HasBase = documentBase(doc)
	x.walk(doc, 0)
	return x.d
}

type extractor struct{ d *Doc }

// documentBase is the href of the first <base href> in tree order.
func documentBase(doc *html.Node) (string, bool) {
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Namespace == "" && n.DataAtom == atom.Base {
			if h, ok := Attr(n, "", "href"); ok {
				return trim(h), true
			}
		}
	}
	return "", false
}

// Attr returns the value of n's attribute key in namespace ns ("" for
// none, "xlink").
func Attr(n *html.Node, ns, key string) (string, bool) {
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

// trim removes ASCII white space, as HTML does around a URL.
func trim(s string) string { return strings.Trim(s, " \t\n\r\f") }

func (x *extractor) add(where, raw string, k Kind) {
	raw = trim(raw)
	if raw == "" || raw[0] == '#' {
		return
	}
	x.d.Refs = append(x.d.Refs, Ref{Where: where, URL: raw, Kind: k})
}

func (x *extractor) addAttr(n *html.Node, ns, key, where string, k Kind) {
	if v, ok := Attr(n, ns, key); ok {
		x.add(where, v, k)
	}
}

func (x *extractor) addSrcset(n *html.Node, key, where string, k Kind) {
	if v, ok := Attr(n, "", key); ok {
		for _, c := range Srcset(v) {
			x.add(where, c, k)
		}
	}
}

// addCSS adds the references of CSS text; an @import is an Import.
func (x *extractor) addCSS(where, text string) {
	for _, r := range cssurl.Refs(text) {
		if r.Import {
			x.add("css @import", r.URL, Import)
		} else {
			x.add(where, r.URL, Load)
		}
	}
}

func (x *extractor) walk(n *html.Node, nesting int) {
	if n.Type == html.ElementNode {
		x.element(n, nesting)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		x.walk(c, nesting)
	}
}

func (x *extractor) element(n *html.Node, nesting int) {
	if v, ok := Attr(n, "", "style"); ok {
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
		x.script(n)
	case atom.Link:
		x.link(n)
	case atom.Img, atom.Source:
		x.addAttr(n, "", "src", name+" src", Load)
		x.addSrcset(n, "srcset", name+" srcset", Load)
		// What lazy-loading scripts (lazysizes, vanilla-lazyload, lozad)
		// move into src and srcset when the image nears the viewport.
		x.addAttr(n, "", "data-src", name+" data-src", Load)
		x.addSrcset(n, "data-srcset", name+" data-srcset", Load)
	case atom.Video:
		x.addAttr(n, "", "src", "video src", Load)
		x.addAttr(n, "", "poster", "video poster", Load)
	case atom.Audio, atom.Track, atom.Embed, atom.Frame:
		x.addAttr(n, "", "src", name+" src", Load)
	case atom.Iframe:
		x.addAttr(n, "", "src", "iframe src", Load)
		if v, ok := Attr(n, "", "srcdoc"); ok && nesting < maxNesting {
			x.nested(v, nil, nesting)
		}
	case atom.Input:
		if t, _ := Attr(n, "", "type"); strings.EqualFold(trim(t), "image") {
			x.addAttr(n, "", "src", "input src", Load)
		}
	case atom.Object:
		x.addAttr(n, "", "data", "object data", Load)
	case atom.Body, atom.Table, atom.Td, atom.Th:
		x.addAttr(n, "", "background", name+" background", Load)
	case atom.Html:
		x.addAttr(n, "", "manifest", "html manifest", Load)
	case atom.Meta:
		x.meta(n)
	case atom.Style:
		x.addCSS("style", text(n))
	case atom.Noscript:
		// Parsed with scripting on, a noscript's content is text; a
		// browser without scripts loads what it holds.
		if nesting < maxNesting {
			x.nested(text(n), n, nesting)
		}
	default:
		if n.DataAtom == 0 && strings.Contains(name, "-") {
			x.custom(n)
		}
	}
}

func (x *extractor) script(n *html.Node) {
	x.addAttr(n, "", "src", "script src", Load)
	// @vitejs/plugin-legacy's entry: <script nomodule
	// id="vite-legacy-entry" data-src="…">System.import(…)</script>,
	// which the inline code loads in a browser without modules.
	x.addAttr(n, "", "data-src", "script data-src", Load)
	if _, ok := Attr(n, "", "src"); ok {
		return
	}
	t, _ := Attr(n, "", "type")
	switch strings.ToLower(trim(t)) {
	case "importmap":
		x.importMap(text(n))
	case "speculationrules":
		x.speculation(text(n))
	default:
		if s := text(n); strings.TrimSpace(s) != "" {
			x.d.Scripts = append(x.d.Scripts, s)
		}
	}
}

func (x *extractor) link(n *html.Node) {
	rel, _ := Attr(n, "", "rel")
	load, maybe, sheet := false, false, false
	for _, r := range strings.Fields(strings.ToLower(rel)) {
		load = load || linkRels[r]
		maybe = maybe || maybeRels[r]
		sheet = sheet || r == "stylesheet"
	}
	// A preload or prefetch of data (as=fetch) or of a page
	// (as=document) is fetched, but is rarely a file of the release: kept
	// only when it names one.
	if as, _ := Attr(n, "", "as"); !sheet && load && (strings.EqualFold(trim(as), "fetch") || strings.EqualFold(trim(as), "document")) {
		load, maybe = false, true
	}
	k := Load
	switch {
	case sheet:
		k = Stylesheet
	case load:
	case maybe:
		k = Maybe
	default:
		return
	}
	where := "link href"
	if sheet {
		where = "link stylesheet href"
	}
	x.addAttr(n, "", "href", where, k)
	if k == Stylesheet {
		k = Load
	}
	x.addSrcset(n, "imagesrcset", "link imagesrcset", k)
}

func (x *extractor) meta(n *html.Node) {
	if h, _ := Attr(n, "", "http-equiv"); strings.EqualFold(trim(h), "refresh") {
		if c, ok := Attr(n, "", "content"); ok {
			if u := RefreshURL(c); u != "" {
				x.add("meta refresh", u, Load)
			}
		}
	}
	if m, _ := Attr(n, "", "name"); metaURLs[strings.ToLower(trim(m))] {
		if c, _ := Attr(n, "", "content"); !strings.EqualFold(trim(c), "none") {
			x.add("meta "+strings.ToLower(trim(m)), c, Load)
		}
	}
}

// custom reads a custom element (a name with a dash: an Astro island, a
// web component): every attribute whose value is shaped like a URL is a
// Maybe (component-url, renderer-url, src): its script loads it.
func (x *extractor) custom(n *html.Node) {
	for _, a := range n.Attr {
		if a.Namespace != "" || a.Key == "style" || a.Key == "class" || a.Key == "id" || a.Key == "slot" {
			continue
		}
		if urlShaped(a.Val) {
			x.add(n.Data+" "+a.Key, a.Val, Maybe)
		}
	}
}

// urlShaped says whether an attribute value could be a URL of a file: no
// white space inside, not JSON, with a "/" or a file extension.
func urlShaped(v string) bool {
	v = trim(v)
	if len(v) < 3 || len(v) > 2048 || v[0] == '{' || v[0] == '[' || strings.ContainsAny(v, " \t\n\r\f\"<>") {
		return false
	}
	if strings.Contains(v, "/") {
		return true
	}
	if i := strings.LastIndexByte(v, '.'); i > 0 && i < len(v)-1 && len(v)-i <= 9 {
		for _, c := range v[i+1:] {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
		return true
	}
	return false
}

// svg reads an SVG element: href and xlink:href (on every element but a
// link, <a>: script, image, use, feImage, and the paint servers and
// filters another document may hold), its <style>, and the presentation
// attributes that take url().
func (x *extractor) svg(n *html.Node) {
	name := n.Data
	if name != "a" {
		x.addAttr(n, "", "href", "svg "+name+" href", Load)
		x.addAttr(n, "xlink", "href", "svg "+name+" xlink:href", Load)
	}
	if name == "style" {
		x.addCSS("svg style", text(n))
	}
	for _, k := range svgURLAttrs {
		if v, ok := Attr(n, "", k); ok {
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
// of every scope of "scopes", in the order of their keys. A map that is
// not JSON is ignored by a browser, and loads nothing.
func (x *extractor) importMap(text string) {
	var m struct {
		Imports map[string]any            `json:"imports"`
		Scopes  map[string]map[string]any `json:"scopes"`
	}
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return
	}
	addAll := func(specs map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(specs)) {
			if s, ok := specs[k].(string); ok {
				x.add("importmap", s, Load)
			}
		}
	}
	addAll(m.Imports)
	for _, k := range slices.Sorted(maps.Keys(m.Scopes)) {
		addAll(m.Scopes[k])
	}
}

// speculation reads speculation rules' list rules: the urls of
// "prefetch" and "prerender" (pages a browser may load ahead).
func (x *extractor) speculation(text string) {
	var m map[string][]struct {
		URLs []string `json:"urls"`
	}
	if json.Unmarshal([]byte(text), &m) != nil {
		return
	}
	for _, k := range []string{"prefetch", "prerender"} {
		for _, r := range m[k] {
			for _, u := range r.URLs {
				x.add("speculationrules "+k, u, Maybe)
			}
		}
	}
}

// RefreshURL is the URL of a meta refresh's content ("5; url=/next"), as
// HTML's "shared declarative refresh steps" read it; empty when it names
// none (a reload of the page itself).
func RefreshURL(content string) string {
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

var stripTabsNewlines = strings.NewReplacer("\t", "", "\n", "", "\r", "")

// BrowserURL is raw as a browser's URL parser reads it before resolving:
// without ASCII tabs and newlines, and, for http(s) (a "special" scheme,
// given or inherited from the base's, baseScheme), with backslashes read
// as slashes.
func BrowserURL(baseScheme, raw string) string {
	raw = stripTabsNewlines.Replace(raw)
	scheme := strings.ToLower(baseScheme)
	if i := strings.IndexAny(raw, ":/\\?#"); i > 0 && raw[i] == ':' {
		scheme = strings.ToLower(raw[:i])
	}
	if scheme == "http" || scheme == "https" {
		raw = strings.ReplaceAll(raw, "\\", "/")
	}
	return raw
}
