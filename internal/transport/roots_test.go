package transport

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// TestRootCAs: WithRootCAs's roots are loaded once, on the first request
// that may use TLS, and trusted; plain http requests never load them, and
// a request through a proxy does (the proxy may be https).
func TestRootCAs(t *testing.T) {
	ca := tlstest.NewCA(t)
	tlsSrv := tlstest.Server(t, ca.ValidFor(t, "127.0.0.1", time.Hour), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	var loads atomic.Int32
	roots := func() *x509.CertPool { loads.Add(1); return ca.Pool }
	c := New(fast(), WithRootCAs(roots), WithTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	send := func(urls ...string) {
		var wg sync.WaitGroup
		for _, u := range urls {
			wg.Go(func() {
				resp, err := get(t, c, u)
				if err != nil {
					t.Errorf("GET %s: %v", u, err)
					return
				}
				resp.Body.Close()
			})
		}
		wg.Wait()
	}
	send(plain.URL, plain.URL, plain.URL)
	if n := loads.Load(); n != 0 {
		t.Fatalf("after plain http requests: roots loaded %d times, want 0", n)
	}
	send(tlsSrv.URL, plain.URL, tlsSrv.URL, plain.URL, tlsSrv.URL+"/a", tlsSrv.URL+"/b")
	if n := loads.Load(); n != 1 {
		t.Errorf("after https requests: roots loaded %d times, want 1", n)
	}
	if certs := c.Certificates(); len(certs) != 1 || certs[0].Error != "" {
		t.Errorf("Certificates() = %+v, want the TLS server's, verified", certs)
	}

	loads.Store(0)
	c = New(fast(), WithRootCAs(roots))
	proxy, _ := url.Parse(plain.URL)
	c.base.Proxy = http.ProxyURL(proxy)
	send("http://lockstep.invalid/")
	if n := loads.Load(); n != 1 {
		t.Errorf("after an http request through a proxy: roots loaded %d times, want 1", n)
	}
}

// TestRootCAsRedirect: a plain http URL that redirects to https loads
// WithRootCAs's roots before the redirected request's handshake, which
// then trusts them.
func TestRootCAsRedirect(t *testing.T) {
	ca := tlstest.NewCA(t)
	tlsSrv := tlstest.Server(t, ca.ValidFor(t, "127.0.0.1", time.Hour), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	plain := httptest.NewServer(http.RedirectHandler(tlsSrv.URL+"/moved", http.StatusFound))
	defer plain.Close()
	var loads atomic.Int32
	c := New(fast(), WithRootCAs(func() *x509.CertPool { loads.Add(1); return ca.Pool }))
	resp, err := get(t, c, plain.URL)
	if err != nil {
		t.Fatalf("GET %s (redirected to https): %v", plain.URL, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Scheme != "https" {
		t.Errorf("GET %s: %s at %s, want 200 at the https URL", plain.URL, resp.Status, resp.Request.URL)
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("roots loaded %d times, want 1", n)
	}
}
