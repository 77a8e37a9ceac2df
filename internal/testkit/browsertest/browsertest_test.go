package browsertest_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/browsertest"
)

// TestLoad: every kind of request the oracle depends on is seen, with its
// outcome: the document's own (a script, a font by CSS, a prefetch), one
// that loads only when scrolled into view, a dedicated worker's fetch, a service
// worker's fetch, a module script from a mapped HTTPS host with CORS, and
// a refused unmapped host.
func TestLoad(t *testing.T) {
	b := browsertest.Start(t)
	files := map[string]string{
		"/": `<!doctype html><html><head><link rel=stylesheet href=/site.css><link rel=prefetch href=/later.js><script src=/app.js></script></head>
<body><a href="/next#x">next</a><a href="https://elsewhere.example/">away</a><div style="height:5000px">tall</div><img loading=lazy src=/below.png width=10 height=10></body></html>`,
		"/site.css": `@font-face{font-family:F;src:url(/f.woff2)} body{font-family:F}`,
		"/app.js": `new Worker('/worker.js');
navigator.serviceWorker.register('/sw.js');
var s=document.createElement('script');s.type='module';s.src='https://cdn.example.test/lib/mod.js';document.head.appendChild(s);
var u=document.createElement('img');u.src='https://elsewhere.example/x.png';document.body.appendChild(u);`,
		"/worker.js": `fetch('/from-worker.json')`,
		"/sw.js":     `self.addEventListener('install', e => e.waitUntil(fetch('/from-sw.txt')));`,
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, ".js"):
			w.Header().Set("Content-Type", "text/javascript")
		case strings.HasSuffix(r.URL.Path, ".css"):
			w.Header().Set("Content-Type", "text/css")
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(site.Close)
	cdn := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "text/javascript")
		w.Write([]byte(`fetch('https://cdn.example.test/lib/data.json')`))
	}))
	cdn.TLS = &tls.Config{Certificates: []tls.Certificate{b.ServerCert(t, "cdn.example.test")}}
	cdn.StartTLS()
	t.Cleanup(cdn.Close)
	cu, _ := url.Parse(cdn.URL)
	page, err := b.Load(context.Background(), site.URL+"/", browsertest.LoadOptions{Hosts: map[string]string{"cdn.example.test:443": cu.Host}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{site.URL + "/next#x", "https://elsewhere.example/"}; !slices.Equal(page.Links, want) {
		t.Errorf("Links = %q, want %q", page.Links, want)
	}
	reqs := page.Requests
	var all []string
	for _, r := range reqs {
		all = append(all, r.String())
	}
	find := func(u string) *browsertest.Request {
		for i := range reqs {
			if reqs[i].URL == u {
				return &reqs[i]
			}
		}
		t.Errorf("no request for %s; the requests:\n%s", u, strings.Join(all, "\n"))
		return nil
	}
	for _, p := range []string{"/", "/site.css", "/app.js", "/f.woff2", "/below.png", "/worker.js", "/sw.js", "/later.js"} {
		find(site.URL + p)
	}
	if r := find(site.URL + "/from-worker.json"); r != nil && r.Target != "worker" {
		t.Errorf("the worker's fetch came from the %s: %s", r.Target, r)
	}
	if r := find(site.URL + "/from-sw.txt"); r != nil && r.Target != "service_worker" {
		t.Errorf("the service worker's fetch came from the %s: %s", r.Target, r)
	}
	if r := find("https://cdn.example.test/lib/mod.js"); r != nil && r.Status != 200 {
		t.Errorf("the CDN's module script: %s", r)
	}
	if r := find("https://cdn.example.test/lib/data.json"); r != nil && (r.Status != 200 || !strings.Contains(r.Initiator, "mod.js")) {
		t.Errorf("the CDN script's fetch: %s", r)
	}
	if r := find("https://elsewhere.example/x.png"); r != nil && r.Failed == "" {
		t.Errorf("an unmapped host was reached: %s", r)
	}
	if r := find(site.URL + "/f.woff2"); r != nil && r.Type != "Font" {
		t.Errorf("the font: %s", r)
	}

	// A request that is never answered: the load ends at its timeout,
	// with the request pending.
	t.Run("bounded by the timeout", func(t *testing.T) {
		hang := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte(`<!doctype html><script>fetch('/never')</script>`))
				return
			}
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(func() { close(hang); slow.Close() })
		start := time.Now()
		page, err := b.Load(context.Background(), slow.URL+"/", browsertest.LoadOptions{Timeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("the load took %v with a 3 s timeout", d)
		}
		if !slices.ContainsFunc(page.Requests, func(r browsertest.Request) bool { return r.URL == slow.URL+"/never" && r.Pending }) {
			t.Errorf("no pending request for /never: %v", page.Requests)
		}
	})

	// A service worker registered late (as Angular's, when the app is
	// stable): the load waits for it to be ready, not for Stay, and sees
	// its install's fetch.
	t.Run("until an event, not for the whole stay", func(t *testing.T) {
		late := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte(`<!doctype html><script>setTimeout(() => navigator.serviceWorker.register('/sw.js'), 1500)</script>`))
			case "/sw.js":
				w.Header().Set("Content-Type", "text/javascript")
				w.Write([]byte(`self.addEventListener('install', e => e.waitUntil(fetch('/installed.txt')));`))
			default:
				w.Write([]byte("ok"))
			}
		}))
		t.Cleanup(late.Close)
		const stay = 60 * time.Second
		start := time.Now()
		page, err := b.Load(context.Background(), late.URL+"/", browsertest.LoadOptions{Stay: stay, Until: "navigator.serviceWorker.ready"})
		if err != nil {
			t.Fatal(err)
		}
		// The event comes about 1.5 s after the navigation; waiting out
		// the stay would take 60.
		if d := time.Since(start); !page.UntilMet || d > stay/2 {
			t.Errorf("Until met %v, after %v; want met, well within the %v stay", page.UntilMet, d, stay)
		}
		if !slices.ContainsFunc(page.Requests, func(r browsertest.Request) bool {
			return r.URL == late.URL+"/installed.txt" && r.Target == "service_worker" && r.Status == 200
		}) {
			t.Errorf("no answered request for /installed.txt from the service worker: %v", page.Requests)
		}

		// An event that never comes: the stay bounds the wait.
		page, err = b.Load(context.Background(), late.URL+"/", browsertest.LoadOptions{Stay: 2 * time.Second, Until: "new Promise(() => {})"})
		if err != nil || page.UntilMet {
			t.Errorf("Until never met: met %v, error %v; want not met and no error", page != nil && page.UntilMet, err)
		}
		// An expression that fails is the load's error.
		if _, err := b.Load(context.Background(), late.URL+"/", browsertest.LoadOptions{Stay: 10 * time.Second, Until: "Promise.reject(new Error('no worker here'))"}); err == nil || !strings.Contains(err.Error(), "no worker here") {
			t.Errorf("Until rejected: error %v, want it named", err)
		}
	})
}
