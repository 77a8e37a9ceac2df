package probe_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission/probe"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verdict"
)

var cdn = []string{"https://cdn.example.com/static/", "https://img.example.com"}

func mapPage(t *testing.T, pageURL, contentType, body string) probe.Mapped {
	t.Helper()
	u, _ := url.Parse(pageURL)
	p, err := probe.Parse(u, contentType, []byte(body))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return probe.Map([]*probe.Page{p}, cdn)
}

func TestMapHTML(t *testing.T) {
	tests := []struct {
		name, page, body string
		ids, foreign     []string
	}{
		{
			name: "every element",
			page: "http://127.0.0.1:8080/",
			body: `<!doctype html><html><head>
<link rel="stylesheet" href="https://cdn.example.com/static/css/site.1a.css">
<link rel="preload" as="font" href="https://cdn.example.com/static/fonts/a.woff2" crossorigin>
<link rel="modulepreload" href="https://cdn.example.com/static/js/vendor.2b.js">
<link rel="icon" href="/favicon.ico"><link rel="shortcut icon" href="https://cdn.example.com/static/fav.png">
<link rel="apple-touch-icon" href="https://img.example.com/touch.png">
<link rel="preload" as="fetch" href="/api/cart" crossorigin><link rel="canonical" href="https://www.example.com/"><link rel="preconnect" href="https://fonts.example.net">
<link rel="preload" as="image" imagesrcset="https://img.example.com/hero-1x.png 1x, https://img.example.com/hero-2x.png 2x">
<script src="https://cdn.example.com/static/js/app.3c.js?v=3#x"></script>
<script>var x = "<script src='https://evil.example/inline.js'>";</script>
</head><body>
<img src="https://img.example.com/logo.svg" srcset="https://img.example.com/logo-2x.svg 2x,https://img.example.com/logo-3x.svg 3x">
<picture><source srcset="https://img.example.com/a.webp 100w, https://img.example.com/b.webp 200w" type="image/webp"><img src="data:image/png;base64,AAAA"></picture>
<video src="https://cdn.example.com/static/v.mp4" poster="https://img.example.com/poster.jpg"></video>
<input type="image" src="https://img.example.com/go.png"><input type="text" src="https://img.example.com/no.png">
<a href="https://cdn.example.com/static/not-an-asset.html">link</a>
<img src="https://cdn.example.com/other/x.png">
<script src="https://tracker.example.net/t.js"></script>
</body></html>`,
			ids: []string{"a.webp", "b.webp", "css/site.1a.css", "fav.png", "favicon.ico", "fonts/a.woff2", "go.png",
				"hero-1x.png", "hero-2x.png", "js/app.3c.js", "js/vendor.2b.js", "logo-2x.svg", "logo-3x.svg", "logo.svg",
				"poster.jpg", "touch.png", "v.mp4"},
			foreign: []string{"https://cdn.example.com/other/x.png", "https://tracker.example.net/t.js"},
		},
		{
			name: "relative and absolute paths on the page's own origin",
			page: "http://127.0.0.1:8080/app/index.html",
			body: `<script src="js/app.js"></script><script src="/static/js/b.js"></script><link rel=stylesheet href="../site.css">`,
			ids:  []string{"app/js/app.js", "js/b.js", "site.css"},
		},
		{
			name: "base href moves relative references to the CDN",
			page: "http://127.0.0.1:8080/",
			body: `<head><base href="https://cdn.example.com/static/"><base href="https://evil.example/"></head><script src="js/app.js"></script>`,
			ids:  []string{"js/app.js"},
		},
		{
			name:    "scheme and default port are part of the origin",
			page:    "http://127.0.0.1:8080/",
			body:    `<script src="http://cdn.example.com/static/a.js"></script><script src="https://cdn.example.com:443/static/b.js"></script><script src="http://127.0.0.1:9090/c.js"></script>`,
			ids:     []string{"b.js"},
			foreign: []string{"http://127.0.0.1:9090/c.js", "http://cdn.example.com/static/a.js"},
		},
		{
			// A custom element's URL attribute is optional on the page's
			// own origin (it may be a link), but under a CDN base it is an
			// asset: an island of another build must not be ignored.
			name: "custom elements' URLs: assets under a CDN base, optional on the origin",
			page: "http://127.0.0.1:8080/",
			body: `<astro-island component-url="https://cdn.example.com/static/_astro/Counter.other.js" renderer-url="https://cdn.example.com/static/_astro/client.js"></astro-island><my-link href="/about"></my-link>`,
			ids:  []string{"_astro/Counter.other.js", "_astro/client.js"},
		},
		{
			name: "not assets",
			page: "http://127.0.0.1:8080/",
			body: `<script src="javascript:alert(1)"></script><img src="data:,x"><img src=""><img src="blob:http://127.0.0.1/x"><link rel="alternate" href="/feed.xml">`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mapPage(t, tt.page, "text/html; charset=utf-8", tt.body)
			if !slices.Equal(m.IDs, tt.ids) {
				t.Errorf("IDs =\n  %q\nwant\n  %q", m.IDs, tt.ids)
			}
			if !slices.Equal(m.Foreign, tt.foreign) {
				t.Errorf("Foreign = %q, want %q", m.Foreign, tt.foreign)
			}
		})
	}
}

func TestMapJSON(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		ids, foreign            []string
		wantErr                 bool
	}{
		{name: "list", contentType: "application/json", body: `["js/app.js", "https://cdn.example.com/static/css/a.css", "/static/img/b.png", "https://x.example/y.js"]`,
			ids: []string{"css/a.css", "img/b.png", "js/app.js"}, foreign: []string{"https://x.example/y.js"}},
		{name: "sniffed list", contentType: "", body: "\n [\"a.js\"]", ids: []string{"a.js"}},
		{name: "assets object", contentType: "application/json", body: `{"assets": ["a.js", "b.css"]}`, ids: []string{"a.js", "b.css"}},
		{name: "vite manifest", contentType: "application/json", body: `{"src/main.ts": {"file": "assets/main.1a.js", "css": ["assets/main.2b.css"], "assets": ["assets/logo.3c.svg"], "isEntry": true}, "src/lazy.ts": {"file": "assets/lazy.4d.js"}}`,
			ids: []string{"assets/lazy.4d.js", "assets/logo.3c.svg", "assets/main.1a.js", "assets/main.2b.css"}},
		{name: "vite legacy manifest", contentType: "application/json", body: `{"index.html": {"file": "assets/index-B1.js", "imports": ["_vendor-C2.js"], "dynamicImports": ["src/lazy.ts"], "isEntry": true},
		  "_vendor-C2.js": {"file": "assets/vendor-C2.js"}, "src/lazy.ts": {"file": "assets/lazy-D3.js", "isDynamicEntry": true},
		  "vite/legacy-polyfills-legacy": {"file": "assets/polyfills-legacy-E4.js", "isEntry": true}, "index-legacy.html": {"file": "assets/index-legacy-F5.js", "isEntry": true}}`,
			ids: []string{"assets/index-B1.js", "assets/index-legacy-F5.js", "assets/lazy-D3.js", "assets/polyfills-legacy-E4.js", "assets/vendor-C2.js"}},
		{name: "webpack-manifest-plugin", contentType: "application/json", body: `{"main.js": "/static/js/main.1a.js", "main.css": "/static/css/main.2b.css", "index.html": "/index.html", "cdn.js": "https://cdn.example.com/static/js/c.3c.js"}`,
			ids: []string{"css/main.2b.css", "index.html", "js/c.3c.js", "js/main.1a.js"}},
		{name: "webpack-assets-manifest with entrypoints", contentType: "application/json", body: `{"main.js": {"src": "/static/js/main.1a.js", "integrity": "sha256-x"}, "entrypoints": {"main": {"assets": {"js": [{"src": "/static/js/vendor.4d.js"}]}}}}`,
			ids: []string{"js/main.1a.js", "js/vendor.4d.js"}},
		{name: "create-react-app asset-manifest", contentType: "application/json", body: `{"files": {"main.js": "/static/js/main.1a.js", "main.js.map": "/static/js/main.1a.js.map"}, "entrypoints": ["static/js/main.1a.js"]}`,
			ids: []string{"js/main.1a.js", "js/main.1a.js.map", "static/js/main.1a.js"}},
		{name: "a bundler list naming another host", contentType: "application/json", body: `{"main.js": "https://x.example/main.js"}`, foreign: []string{"https://x.example/main.js"}},
		{name: "not a list of strings", contentType: "application/json", body: `[1, 2]`, wantErr: true},
		{name: "assets not strings", contentType: "application/json", body: `{"assets": [{"path": "a.js"}]}`, wantErr: true},
		{name: "unknown object", contentType: "application/json", body: `{"version": 3}`, wantErr: true},
		{name: "vite import of a chunk it lacks", contentType: "application/json", body: `{"index.html": {"file": "assets/a.js", "imports": ["_gone.js"]}}`, wantErr: true},
		{name: "an empty entry", contentType: "application/json", body: `{"main.js": ""}`, wantErr: true},
		{name: "empty object", contentType: "application/json", body: `{}`, wantErr: true},
		{name: "malformed", contentType: "application/json", body: `["a.js"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := url.Parse("http://127.0.0.1:8080/assets.json")
			p, err := probe.Parse(u, tt.contentType, []byte(tt.body))
			if tt.wantErr {
				// The instance answered with something the gate can name
				// as wrong: a refusal, never "unavailable".
				var re *probe.RefusalError
				if !errors.As(err, &re) || re.Reason != probe.ReasonJSON || verdict.IsUnavailable(err) {
					t.Fatalf("Parse(%s) = %+v, %v; want a *RefusalError of reason %q", tt.body, p, err, probe.ReasonJSON)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != "json" {
				t.Errorf("Kind = %q, want json", p.Kind)
			}
			m := probe.Map([]*probe.Page{p}, cdn)
			if !slices.Equal(m.IDs, tt.ids) || !slices.Equal(m.Foreign, tt.foreign) {
				t.Errorf("Map = %q / %q, want %q / %q", m.IDs, m.Foreign, tt.ids, tt.foreign)
			}
		})
	}
}

func TestFetch(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<script src="/static/js/app.js"></script>`))
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/", http.StatusFound) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 2048))) })
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "booting", http.StatusServiceUnavailable) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := transport.New(transport.Policy{MaxAttempts: 1})
	ctx := context.Background()
	for _, path := range []string{"/", "/old"} {
		p, err := probe.Fetch(ctx, srv.URL+path, probe.Options{Client: client})
		if err != nil {
			t.Fatalf("Fetch(%s): %v", path, err)
		}
		if m := probe.Map([]*probe.Page{p}, cdn); !slices.Equal(m.IDs, []string{"js/app.js"}) {
			t.Errorf("Fetch(%s) IDs = %q", path, m.IDs)
		}
	}
	for _, path := range []string{"/big", "/down", "/missing"} {
		_, err := probe.Fetch(ctx, srv.URL+path, probe.Options{Client: client, MaxSize: 1024})
		if !verdict.IsUnavailable(err) {
			t.Errorf("Fetch(%s) = %v, want an UnavailableError", path, err)
		}
	}
	if _, err := probe.Fetch(ctx, "http://127.0.0.1:1/", probe.Options{Client: client}); !verdict.IsUnavailable(err) {
		t.Errorf("Fetch(closed port) = %v, want an UnavailableError", err)
	}
}

// TestMapLocal: the references on the page's own origin are where a
// browser fetches them, on the instance: each with the base its ID is
// relative to.
func TestMapLocal(t *testing.T) {
	m := mapPage(t, "http://127.0.0.1:8080/app/", "text/html",
		`<script src="/static/js/a.1.js?v=2"></script><script src="js/b.2.js"></script><link rel=stylesheet href="https://cdn.example.com/static/css/c.css">`+
			`<img src="http://127.0.0.1:8080/static/img/d.png"><img src="/static/img/d.png#x">`)
	want := []probe.Local{
		{ID: "app/js/b.2.js", Base: "http://127.0.0.1:8080/"},
		{ID: "img/d.png", Base: "http://127.0.0.1:8080/static/"},
		{ID: "js/a.1.js", Base: "http://127.0.0.1:8080/static/"},
	}
	if !slices.Equal(m.Local, want) {
		t.Errorf("Local = %+v, want %+v", m.Local, want)
	}
	if !slices.Equal(m.IDs, []string{"app/js/b.2.js", "css/c.css", "img/d.png", "js/a.1.js"}) {
		t.Errorf("IDs = %q", m.IDs)
	}
	if m := mapPage(t, "http://127.0.0.1:8080/", "text/html", `<script src="https://cdn.example.com/static/a.js"></script>`); m.Local != nil {
		t.Errorf("a page of CDN references only: Local = %+v, want none", m.Local)
	}
}

// TestFetchMissingStylesheet: a same-origin stylesheet the page names that
// answers 404 or 410 is a file missing, not a probe that cannot read: it
// stays a reference (the gate checks it and refuses, naming it), and the
// page's other references are kept. A stylesheet that fails otherwise (a
// 503) is still could-not-check.
func TestFetchMissingStylesheet(t *testing.T) {
	mux := http.NewServeMux()
	page := func(css string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<link rel=stylesheet href="/static/css/` + css + `"><script src="/static/js/app.js"></script>`))
		}
	}
	mux.HandleFunc("/gone", page("gone.css"))
	mux.HandleFunc("/missing", page("missing.css"))
	mux.HandleFunc("/down", page("down.css"))
	mux.HandleFunc("/static/css/gone.css", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) })
	mux.HandleFunc("/static/css/down.css", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "booting", http.StatusServiceUnavailable) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := transport.New(transport.Policy{MaxAttempts: 1})
	for _, name := range []string{"missing", "gone"} {
		p, err := probe.Fetch(context.Background(), srv.URL+"/"+name, probe.Options{Client: client})
		if err != nil {
			t.Fatalf("Fetch(/%s): %v", name, err)
		}
		m := probe.Map([]*probe.Page{p}, cdn)
		var ids []string
		for _, l := range m.Local {
			ids = append(ids, l.ID)
		}
		slices.Sort(ids)
		if want := []string{"css/" + name + ".css", "js/app.js"}; !slices.Equal(ids, want) {
			t.Errorf("Fetch(/%s) local IDs = %q, want %q", name, ids, want)
		}
	}
	if _, err := probe.Fetch(context.Background(), srv.URL+"/down", probe.Options{Client: client}); !verdict.IsUnavailable(err) {
		t.Errorf("Fetch(/down) = %v, want an UnavailableError", err)
	}
}
