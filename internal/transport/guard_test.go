package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
)

// A denied literal is refused before any connection is opened: the dial
// function (which would reach the network) is never called.
func TestDeniedLiteralNeverDials(t *testing.T) {
	var dials atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("no dialing in this test")
	}
	c := New(Policy{MaxAttempts: 3}, WithDialContext(dial), WithDeniedAddresses(LinkLocal...))
	c.base.DialContext = dial // keep the guard's literal check, drop its dialer
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/", "http://169.254.170.2/v2/credentials", "https://169.254.0.1:8443/",
		"http://[fe80::1]/", "http://[fe80::1%25eth0]/", "http://[fd00:ec2::254]/", "http://[::ffff:169.254.169.254]/",
		"http://[::ffff:a9fe:a9fe]/",
	} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		_, err := c.HTTPClient().Do(req)
		var de *DeniedAddressError
		if !errors.As(err, &de) {
			t.Errorf("GET %s = %v, want a *DeniedAddressError", u, err)
		}
		if RetryableError(err) {
			t.Errorf("GET %s: a denied address is retryable", u)
		}
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials, want none", n)
	}
	if s := c.Stats(); s.Requests != 0 || s.Retries != 0 {
		t.Errorf("stats %+v, want no request sent", s)
	}
}

// The address dialed is checked after name resolution: with loopback
// denied, "localhost" is refused at the dial, and a server there gets no
// connection.
func TestDeniedAfterResolution(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := New(Policy{MaxAttempts: 1}, WithDeniedAddresses(netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")))
	_, err := c.HTTPClient().Get("http://localhost:" + port + "/")
	var de *DeniedAddressError
	if !errors.As(err, &de) {
		t.Fatalf("GET localhost = %v, want a *DeniedAddressError", err)
	}
	if hits.Load() != 0 {
		t.Errorf("the server was reached")
	}
	// Without the guard the same request goes through.
	resp, err := New(Policy{MaxAttempts: 1}).HTTPClient().Get("http://localhost:" + port + "/")
	if err != nil {
		t.Fatalf("unguarded GET: %v", err)
	}
	resp.Body.Close()
}

func TestSameOriginRedirects(t *testing.T) {
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, other.URL+"/", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := New(Policy{MaxAttempts: 1}, WithSameOriginRedirects())
	resp, err := c.HTTPClient().Get(srv.URL + "/here")
	if err != nil {
		t.Fatalf("redirect on the origin: %v", err)
	}
	resp.Body.Close()
	_, err = c.HTTPClient().Get(srv.URL + "/away")
	var re *RedirectError
	if !errors.As(err, &re) || RetryableError(err) {
		t.Fatalf("redirect off the origin = %v, want a *RedirectError, not retryable", err)
	}
	if otherHits.Load() != 0 {
		t.Errorf("the other origin was contacted")
	}
	// Without the option the client follows it.
	resp, err = New(Policy{MaxAttempts: 1}).HTTPClient().Get(srv.URL + "/away")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if otherHits.Load() != 1 {
		t.Errorf("other origin hits = %d, want 1 without the option", otherHits.Load())
	}
}

func TestOrigin(t *testing.T) {
	same := [][2]string{{"http://A.example", "http://a.example:80"}, {"https://a.example.", "https://a.example:443"}, {"http://[::1]:80", "http://[::1]"}}
	for _, p := range same {
		a, b := mustURL(t, p[0]).URL, mustURL(t, p[1]).URL
		if Origin(a.Scheme, a.Host) != Origin(b.Scheme, b.Host) {
			t.Errorf("Origin(%s) != Origin(%s)", p[0], p[1])
		}
	}
	differ := [][2]string{{"http://a.example", "https://a.example"}, {"http://a.example", "http://a.example:8080"}, {"http://a.example", "http://b.example"}}
	for _, p := range differ {
		a, b := mustURL(t, p[0]).URL, mustURL(t, p[1]).URL
		if Origin(a.Scheme, a.Host) == Origin(b.Scheme, b.Host) {
			t.Errorf("Origin(%s) == Origin(%s)", p[0], p[1])
		}
	}
}

func mustURL(t *testing.T, s string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
