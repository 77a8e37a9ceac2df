package probe

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/lockstep-dev/lockstep/internal/htmlrefs"
)

// Extract returns the references of a parsed HTML document fetched from
// page, in document order, each once: what the shared table
// (internal/htmlrefs, the asset graph's too) says a browser loads,
// resolved against the page or its first <base href>. A reference the
// table marks as loaded only under conditions (a custom element's
// URL-valued attribute, a preload of data) is Optional.
func Extract(page *url.URL, doc *html.Node) []Reference {
	d := htmlrefs.Extract(doc)
	base := page
	if d.HasBase {
		if u, err := page.Parse(d.Base); err == nil {
			base = u
		}
	}
	x := &extractor{base: base, seen: map[string]int{}}
	for _, r := range d.Refs {
		where := r.Where
		switch r.Kind {
		case htmlrefs.Stylesheet:
			where = WhereStylesheet
		case htmlrefs.Import:
			where = WhereImport
		}
		x.add(where, r.URL, r.Kind == htmlrefs.Maybe)
	}
	return x.refs
}

type extractor struct {
	base *url.URL
	refs []Reference
	seen map[string]int
}

// add records a reference, resolved. One that a reference already
// recorded names is not recorded again (an optional one becomes required
// when a required one names it too).
func (x *extractor) add(where, raw string, optional bool) {
	raw = strings.Trim(raw, " \t\n\r\f")
	if raw == "" || strings.HasPrefix(raw, "#") {
		return
	}
	raw = htmlrefs.BrowserURL(x.base.Scheme, raw)
	r := Reference{Where: where, URL: raw, Optional: optional}
	if u, err := x.base.Parse(raw); err == nil {
		r.URL = u.String()
	}
	if i, ok := x.seen[r.URL]; ok {
		if i >= 0 { // -1: recorded before this extractor
			x.refs[i].Optional = x.refs[i].Optional && optional
		}
		return
	}
	x.seen[r.URL] = len(x.refs)
	x.refs = append(x.refs, r)
}

// The Where of references that are stylesheets, which Fetch reads in turn.
const (
	WhereStylesheet = "link stylesheet href"
	WhereImport     = "css @import"
)
