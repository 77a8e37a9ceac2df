package probe

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/lockstep-dev/lockstep/internal/cssurl"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultMaxSize bounds a probed page (8 MiB).
const DefaultMaxSize = 8 << 20

// Page is what one probe found: every reference, resolved.
type Page struct {
	// URL is the probed URL (after redirects, the final one).
	URL string `json:"url"`
	// Kind is "html" or "json".
	Kind string `json:"kind"`
	// References are absolute URLs (or, from JSON lists, bare asset IDs),
	// in document order, each once.
	References []Reference `json:"references"`
}

// Reference is one asset reference of a page.
type Reference struct {
	// Where says which element and attribute held it, e.g. "script src".
	Where string `json:"where"`
	// URL is the reference resolved against the page; for a bare asset ID
	// of a JSON list it is empty and ID is set.
	URL string `json:"url,omitempty"`
	ID  string `json:"id,omitempty"`
	// Optional marks a reference that a browser loads only under
	// conditions the page alone does not settle (a custom element's
	// URL-valued attribute, a preload of data): the gate holds it to the
	// manifest only when it names a file of the release.
	Optional bool `json:"optional,omitempty"`
}

// Options configure Fetch.
type Options struct {
	// Client sends the request; nil means a client with the default policy.
	// Whatever the client's own rules, Fetch follows a redirect only on
	// the probed URL's origin.
	Client *transport.Client
	// MaxSize bounds each body (the page, each stylesheet); 0 means
	// DefaultMaxSize. A longer body is an error, not a truncated page.
	MaxSize int64
	// MaxStylesheets bounds the stylesheets of the page's origin read for
	// their url() and @import references (DefaultMaxStylesheets when 0);
	// a page that links more is refused, not read in part.
	MaxStylesheets int
}

// DefaultMaxStylesheets bounds the stylesheets one probe reads.
const DefaultMaxStylesheets = 64

// Reasons of a RefusalError.
const (
	ReasonRedirect        = "redirect"
	ReasonContentEncoding = "content-encoding"
	ReasonContentType     = "content-type"
	ReasonTooManySheets   = "stylesheets"
	// ReasonJSON: a JSON answer that is no asset list in a shape the
	// probe reads (or not JSON at all, though served as JSON).
	ReasonJSON = "json"
)

// RefusalError reports a probe that can prove nothing: a redirect off the
// probed origin, a body in a Content-Encoding the probe cannot decode, a
// content type it cannot read, a JSON answer in no shape it reads, or more
// stylesheets than it reads. It is a
// refusal (the instance serves something the gate cannot check), not an
// unavailable dependency.
type RefusalError struct {
	URL    string
	Reason string
	Err    error
}

func (e *RefusalError) Error() string { return fmt.Sprintf("probe %s: %v", e.URL, e.Err) }
func (e *RefusalError) Unwrap() error { return e.Err }

// Fetch GETs rawURL and parses it; then it GETs every stylesheet of the
// page's origin that the page (or such a stylesheet, by @import) links,
// and adds their url() and @import references. A page that cannot be
// fetched, answers with a status other than 200, or is over MaxSize is an
// *verdict.UnavailableError (the app is not serving); a redirect to another
// origin, an undecodable Content-Encoding or an unreadable content type
// is a *RefusalError, and so is a JSON body in no accepted shape.
func Fetch(ctx context.Context, rawURL string, opt Options) (*Page, error) {
	if opt.Client == nil {
		opt.Client = transport.New(transport.DefaultPolicy())
	}
	if opt.MaxSize <= 0 {
		opt.MaxSize = DefaultMaxSize
	}
	if opt.MaxStylesheets <= 0 {
		opt.MaxStylesheets = DefaultMaxStylesheets
	}
	final, ct, body, err := get(ctx, rawURL, "text/html, application/json;q=0.9, */*;q=0.1", opt)
	if err != nil {
		return nil, err
	}
	p, err := Parse(final, ct, body)
	if err != nil {
		return nil, err
	}
	if p.Kind == "html" {
		if err := stylesheets(ctx, p, final, opt); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// get fetches one body, under the probe's rules for redirects and
// encodings.
func get(ctx context.Context, rawURL, accept string, opt Options) (*url.URL, string, []byte, error) {
	dep := "probe " + rawURL
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, "", nil, fmt.Errorf("probe %q: %w", rawURL, err)
	}
	req.Header.Set("Accept", accept)
	hc := opt.Client.HTTPClient()
	clientRule := hc.CheckRedirect
	hc.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if err := transport.CheckSameOrigin(r, via); err != nil {
			return &RefusalError{URL: rawURL, Reason: ReasonRedirect, Err: err}
		}
		return clientRule(r, via)
	}
	resp, err := hc.Do(req)
	if err != nil {
		var re *RefusalError
		if errors.As(err, &re) {
			return nil, "", nil, re
		}
		return nil, "", nil, verdict.Unavailable(dep, err)
	}
	defer resp.Body.Close()
	if ce := strings.TrimSpace(resp.Header.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		// Only what the client decodes itself (gzip, which it then
		// removes from the header) is readable.
		return nil, "", nil, &RefusalError{URL: rawURL, Reason: ReasonContentEncoding,
			Err: fmt.Errorf("the body is in Content-Encoding %q, which the probe cannot decode", ce)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, opt.MaxSize+1))
	if err != nil {
		if resp.Uncompressed && (errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || isCorrupt(err)) {
			return nil, "", nil, &RefusalError{URL: rawURL, Reason: ReasonContentEncoding, Err: fmt.Errorf("decoding the gzip body: %w", err)}
		}
		return nil, "", nil, verdict.Unavailable(dep, fmt.Errorf("reading: %w", err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", nil, verdict.Unavailable(dep, &StatusError{URL: rawURL, Code: resp.StatusCode, Status: resp.Status})
	}
	if int64(len(body)) > opt.MaxSize {
		return nil, "", nil, verdict.Unavailable(dep, fmt.Errorf("page is over %d bytes", opt.MaxSize))
	}
	return resp.Request.URL, resp.Header.Get("Content-Type"), body, nil
}

func isCorrupt(err error) bool {
	var ce flate.CorruptInputError
	return errors.As(err, &ce)
}

// stylesheets reads the stylesheets of the page's origin, breadth first,
// adding their references to p.
func stylesheets(ctx context.Context, p *Page, page *url.URL, opt Options) error {
	origin := transport.Origin(page.Scheme, page.Host)
	fetched := map[string]bool{}
	for i := 0; i < len(p.References); i++ {
		r := p.References[i]
		if r.Where != WhereStylesheet && r.Where != WhereImport {
			continue
		}
		u, err := url.Parse(r.URL)
		if err != nil || transport.Origin(u.Scheme, u.Host) != origin {
			continue
		}
		u.Fragment = ""
		if fetched[u.String()] {
			continue
		}
		if len(fetched) == opt.MaxStylesheets {
			return &RefusalError{URL: p.URL, Reason: ReasonTooManySheets,
				Err: fmt.Errorf("the page links more than %d stylesheets of its origin", opt.MaxStylesheets)}
		}
		fetched[u.String()] = true
		final, ct, body, err := get(ctx, u.String(), "text/css, */*;q=0.1", opt)
		if se := (*StatusError)(nil); errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusGone) {
			// A stylesheet the page names that is not there: not a probe
			// that cannot read, but a file missing. It stays a reference,
			// which the gate checks (and refuses, naming it, as missing
			// or as not in the manifest).
			continue
		}
		if err != nil {
			return err
		}
		if err := readableCSS(final, ct, body); err != nil {
			return err
		}
		x := &extractor{base: final, seen: map[string]int{}}
		for _, q := range p.References {
			x.seen[q.URL] = -1
		}
		for _, r := range cssurl.Refs(string(body)) {
			where := "stylesheet " + final.String()
			if r.Import {
				where = WhereImport
			}
			x.add(where, r.URL, false)
		}
		p.References = append(p.References, x.refs...)
	}
	return nil
}

// Parse finds the references of a page fetched from page. A content type
// the probe cannot read (neither HTML nor JSON, or a charset that is not
// ASCII-compatible) and JSON in no shape it reads are a *RefusalError.
func Parse(page *url.URL, contentType string, body []byte) (*Page, error) {
	p := &Page{URL: page.String()}
	kind, err := readable(contentType, body)
	if err != nil {
		return nil, &RefusalError{URL: p.URL, Reason: ReasonContentType, Err: err}
	}
	p.Kind = kind
	if kind == "json" {
		refs, err := parseJSON(page, body)
		if err != nil {
			return nil, &RefusalError{URL: p.URL, Reason: ReasonJSON, Err: err}
		}
		p.References = refs
		return p, nil
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, &RefusalError{URL: p.URL, Reason: ReasonContentType, Err: fmt.Errorf("parsing HTML: %w", err)}
	}
	p.References = Extract(page, doc)
	return p, nil
}

// asciiCharsets are the charsets whose bytes the probe reads as they are:
// every URL a page can reference is ASCII in them.
var asciiCharsets = map[string]bool{"": true, "utf-8": true, "utf8": true, "us-ascii": true, "ascii": true,
	"iso-8859-1": true, "latin1": true, "windows-1252": true}

// readable says how a body is read: "html" or "json", or why it cannot be.
func readable(contentType string, body []byte) (string, error) {
	mt, params := "", map[string]string{}
	if strings.TrimSpace(contentType) != "" {
		var err error
		if mt, params, err = mime.ParseMediaType(contentType); err != nil {
			return "", fmt.Errorf("content type %q: %w", contentType, err)
		}
	}
	if cs := strings.ToLower(strings.TrimSpace(params["charset"])); !asciiCharsets[cs] {
		return "", fmt.Errorf("charset %q: the probe reads ASCII-compatible pages only", cs)
	}
	if bytes.HasPrefix(body, []byte{0xFE, 0xFF}) || bytes.HasPrefix(body, []byte{0xFF, 0xFE}) {
		return "", errors.New("the body is UTF-16 (a byte order mark): the probe reads ASCII-compatible pages only")
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "json", nil
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "html", nil
	case mt != "":
		return "", fmt.Errorf("content type %q is neither HTML nor JSON", mt)
	}
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	if len(b) > 0 && (b[0] == '[' || b[0] == '{') {
		return "json", nil
	}
	if sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(body)); sniffed == "text/html" {
		return "html", nil
	}
	return "", errors.New("no content type, and the body is neither HTML nor JSON")
}

// readableCSS refuses a stylesheet the probe cannot read: one served as
// anything but text/css (a browser would not apply it either), or in a
// charset that is not ASCII-compatible.
func readableCSS(u *url.URL, contentType string, body []byte) error {
	mt, params, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
		err = fmt.Errorf("stylesheet content type %q: %v", contentType, err)
	case mt != "text/css":
		err = fmt.Errorf("stylesheet content type %q is not text/css", mt)
	case !asciiCharsets[strings.ToLower(strings.TrimSpace(params["charset"]))]:
		err = fmt.Errorf("stylesheet charset %q: the probe reads ASCII-compatible stylesheets only", params["charset"])
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}) || bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		err = errors.New("the stylesheet is UTF-16")
	default:
		return nil
	}
	return &RefusalError{URL: u.String(), Reason: ReasonContentType, Err: err}
}

// parseJSON reads an asset list in one of the documented shapes: a list
// of strings, {"assets": [...]}, or a bundler's list in a shape that
// manifest/assets reads for record (Vite's build manifest, the webpack
// manifest plugins'), through assets.ListEntries.
func parseJSON(page *url.URL, body []byte) ([]Reference, error) {
	var refs []Reference
	seen := map[string]bool{}
	add := func(where, s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		r := Reference{Where: where}
		if u, err := url.Parse(s); err == nil && (u.IsAbs() || strings.HasPrefix(s, "/")) {
			r.URL = page.ResolveReference(u).String()
		} else {
			r.ID = s
		}
		if k := r.URL + "\x00" + r.ID; !seen[k] {
			seen[k] = true
			refs = append(refs, r)
		}
	}
	var list []string
	if err := json.Unmarshal(body, &list); err == nil {
		for _, s := range list {
			add("json", s)
		}
		return refs, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("JSON is neither a list of strings nor an object: %w", err)
	}
	if raw, ok := obj["assets"]; ok && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf(`"assets" is not a list of strings: %w`, err)
		}
		for _, s := range list {
			add("json assets", s)
		}
		return refs, nil
	}
	format, entries, err := assets.ListEntries(body)
	if err != nil {
		return nil, fmt.Errorf(`JSON object is neither {"assets": [...]} nor a bundler's asset list: %w`, err)
	}
	for _, e := range entries {
		add("json "+format, e)
	}
	return refs, nil
}
