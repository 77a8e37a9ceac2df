package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/html"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verify"
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
}

// Options configure Fetch.
type Options struct {
	// Client sends the request; nil means a client with the default policy.
	Client *transport.Client
	// MaxSize bounds the body; 0 means DefaultMaxSize. A longer body is an
	// error, not a truncated page.
	MaxSize int64
}

// Fetch GETs rawURL and parses it. A page that cannot be fetched, answers
// with a status other than 200, or is over MaxSize is an
// *verify.UnavailableError (the app is not serving); a JSON body in no
// accepted shape is another error.
func Fetch(ctx context.Context, rawURL string, opt Options) (*Page, error) {
	client := opt.Client
	if client == nil {
		client = transport.New(transport.DefaultPolicy())
	}
	limit := opt.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	dep := "probe " + rawURL
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("probe %q: %w", rawURL, err)
	}
	req.Header.Set("Accept", "text/html, application/json;q=0.9, */*;q=0.1")
	resp, err := client.HTTPClient().Do(req)
	if err != nil {
		return nil, verify.Unavailable(dep, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, verify.Unavailable(dep, fmt.Errorf("reading: %w", err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, verify.Unavailable(dep, &StatusError{URL: rawURL, Code: resp.StatusCode, Status: resp.Status})
	}
	if int64(len(body)) > limit {
		return nil, verify.Unavailable(dep, fmt.Errorf("page is over %d bytes", limit))
	}
	return Parse(resp.Request.URL, resp.Header.Get("Content-Type"), body)
}

// Parse finds the references of a page fetched from page.
func Parse(page *url.URL, contentType string, body []byte) (*Page, error) {
	p := &Page{URL: page.String()}
	if isJSON(contentType, body) {
		p.Kind = "json"
		refs, err := parseJSON(page, body)
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", page, err)
		}
		p.References = refs
		return p, nil
	}
	p.Kind = "html"
	p.References = parseHTML(page, body)
	return p, nil
}

func isJSON(contentType string, body []byte) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return true
	case mt == "text/html" || mt == "application/xhtml+xml":
		return false
	}
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	return len(b) > 0 && (b[0] == '[' || b[0] == '{')
}

// assetRels are the link relations whose href is an asset.
var assetRels = map[string]bool{
	"stylesheet": true, "preload": true, "modulepreload": true, "prefetch": true, "icon": true,
	"shortcut": true, "apple-touch-icon": true, "apple-touch-icon-precomposed": true,
	"mask-icon": true, "manifest": true,
}

// parseHTML walks the tokens of an HTML document.
func parseHTML(page *url.URL, body []byte) []Reference {
	base := page
	var refs []Reference
	seen := map[string]bool{}
	add := func(where, raw string) {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return
		}
		u, err := base.Parse(raw)
		if err != nil {
			refs = append(refs, Reference{Where: where, URL: raw})
			return
		}
		s := u.String()
		if !seen[s] {
			seen[s] = true
			refs = append(refs, Reference{Where: where, URL: s})
		}
	}
	addSet := func(where, v string) {
		for _, c := range srcset(v) {
			add(where, c)
		}
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	baseSet := false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return refs
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		attr := func(k string) (string, bool) {
			for _, a := range tok.Attr {
				if a.Namespace == "" && a.Key == k {
					return a.Val, true
				}
			}
			return "", false
		}
		name := tok.Data
		switch name {
		case "base":
			if h, ok := attr("href"); ok && !baseSet {
				if u, err := page.Parse(strings.TrimSpace(h)); err == nil {
					base, baseSet = u, true
				}
			}
		case "script", "audio", "track", "embed":
			if v, ok := attr("src"); ok {
				add(name+" src", v)
			}
		case "link":
			rel, _ := attr("rel")
			asset := false
			for _, r := range strings.Fields(strings.ToLower(rel)) {
				asset = asset || assetRels[r]
			}
			// A preload of data (as=fetch) or of a page is not a static
			// asset.
			if as, _ := attr("as"); strings.EqualFold(as, "fetch") || strings.EqualFold(as, "document") {
				asset = false
			}
			if !asset {
				continue
			}
			if v, ok := attr("href"); ok {
				add("link href", v)
			}
			if v, ok := attr("imagesrcset"); ok {
				addSet("link imagesrcset", v)
			}
		case "img", "source", "video", "input":
			if name == "input" {
				if t, _ := attr("type"); !strings.EqualFold(t, "image") {
					continue
				}
			}
			if v, ok := attr("src"); ok {
				add(name+" src", v)
			}
			if v, ok := attr("srcset"); ok {
				addSet(name+" srcset", v)
			}
			if v, ok := attr("poster"); ok && name == "video" {
				add("video poster", v)
			}
		case "object":
			if v, ok := attr("data"); ok {
				add("object data", v)
			}
		}
	}
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

// parseJSON reads an asset list in one of the documented shapes.
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
	if raw, ok := obj["assets"]; ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf(`"assets" is not a list of strings: %w`, err)
		}
		for _, s := range list {
			add("json assets", s)
		}
		return refs, nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var chunk struct {
			File   string   `json:"file"`
			CSS    []string `json:"css"`
			Assets []string `json:"assets"`
		}
		if err := json.Unmarshal(obj[k], &chunk); err != nil || chunk.File == "" {
			return nil, fmt.Errorf(`JSON object has no "assets" list and %q is not a build-manifest chunk with a "file"`, k)
		}
		add("json file", chunk.File)
		for _, s := range slices.Concat(chunk.CSS, chunk.Assets) {
			add("json file", s)
		}
	}
	return refs, nil
}
