package graph

import (
	"bytes"
	"net/url"

	"github.com/lockstep-dev/lockstep/internal/htmlrefs"
)

// htmlRefs returns what the HTML document at p makes a browser load, by
// the table the boot gate's probe reads too (internal/htmlrefs): every
// element and attribute a browser fetches from, CSS in <style> and style
// attributes, import maps, a custom element's URL-valued attributes
// (kept when they name a file, as every reference here), and the code of
// inline scripts, read as JavaScript. A <base href> applies to every
// relative reference: it is resolved against the page's path, and each
// reference against it.
func htmlRefs(p string, src []byte) []string {
	d, err := htmlrefs.Parse(bytes.NewReader(src))
	if err != nil {
		return nil // x/net/html returns no error for a document read from memory
	}
	return docRefs(p, d)
}

// docRefs are the references of a document read by the table, with its
// base applied, and its inline scripts' strings.
func docRefs(p string, d *htmlrefs.Doc) []string {
	var base *url.URL
	if d.HasBase {
		page := &url.URL{Path: "/" + p}
		if u, err := page.Parse(d.Base); err == nil {
			base = u
		}
	}
	out := make([]string, 0, len(d.Refs))
	for _, r := range d.Refs {
		out = append(out, withBase(base, htmlrefs.BrowserURL("https", r.URL)))
	}
	for _, s := range d.Scripts {
		// A copy: the JavaScript parser's input writes a NUL after the
		// bytes it is given.
		js, _ := jsStrings([]byte(s))
		out = append(out, js...)
	}
	return out
}

// withBase resolves ref against a document's base (nil: none): an
// absolute URL, or an absolute path the resolver places under the public
// path and the CDN bases.
func withBase(base *url.URL, ref string) string {
	if base == nil {
		return ref
	}
	u, err := base.Parse(ref)
	if err != nil {
		return ref
	}
	if u.Scheme != "" || u.Host != "" {
		return u.String()
	}
	return u.EscapedPath()
}
