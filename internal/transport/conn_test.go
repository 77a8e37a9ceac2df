package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestBodyReadToEOF: a body read to its end and never closed, as the
// Docker client leaves every error answer's, gives its host's slot back:
// more such requests than MaxConnsPerHost all complete. Before, the next
// request after the cap waited for a slot until its deadline, and a gate
// waiting for a mistyped container went silent and lost the cause.
func TestBodyReadToEOF(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "No such container: acme-wbe", http.StatusNotFound)
	}))
	defer srv.Close()
	p := fast()
	p.MaxConnsPerHost = 2
	c := New(p)
	for i := range 3 * p.MaxConnsPerHost {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := c.HTTPClient().Do(req)
		if err != nil {
			cancel()
			t.Fatalf("request %d (the cap is %d): %v", i+1, p.MaxConnsPerHost, err)
		}
		b, err := io.ReadAll(resp.Body) // read to its end, never closed
		cancel()
		if err != nil || !strings.Contains(string(b), "acme-wbe") {
			t.Fatalf("request %d: body %q, %v", i+1, b, err)
		}
	}
}

// TestConnectionReuse: bodies left unread, and retried responses, are
// drained so that one connection serves every request.
func TestConnectionReuse(t *testing.T) {
	var conns, n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, strings.Repeat("x", 4000))
			return
		}
		io.WriteString(w, strings.Repeat("y", 10000))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := fast()
	p.RetryFloor = 100
	c := New(p)
	for range 50 {
		resp, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if conns.Load() != 1 || c.Stats().Retries == 0 {
		t.Errorf("50 requests (%d retries) used %d connections, want 1", c.Stats().Retries, conns.Load())
	}
}

func TestStallAndReset(t *testing.T) {
	var stalls, resets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stall":
			stalls.Add(1)
			<-r.Context().Done()
		case "/reset-once":
			if resets.Add(1) == 1 {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.(*net.TCPConn).SetLinger(0)
					conn.Close()
				}
				return
			}
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	p := fast()
	p.Timeout, p.MaxAttempts = 100*time.Millisecond, 2
	p.BreakerFailures = -1 // two stalls and a reset in a row would open it (TestBreaker)
	c := New(p)
	_, err := get(t, c, srv.URL+"/stall")
	if !errors.Is(err, context.DeadlineExceeded) || stalls.Load() != 2 {
		t.Errorf("stalled server: err %v after %d attempts, want a deadline after 2", err, stalls.Load())
	}
	resp, err := get(t, c, srv.URL+"/reset-once")
	if err != nil {
		t.Fatalf("reset once then ok: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resets.Load() != 2 {
		t.Errorf("reset once then ok: %d after %d attempts, want 200 after 2", resp.StatusCode, resets.Load())
	}
}

func TestRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	p := fast()
	p.MaxAttempts = 3
	c := New(p)
	_, err = get(t, c, "http://"+addr+"/")
	if !errors.Is(err, syscall.ECONNREFUSED) || c.Stats().Requests != 3 {
		t.Errorf("refused: %v after %d attempts, want ECONNREFUSED after 3", err, c.Stats().Requests)
	}
}

func TestLoops(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/b", http.StatusFound) })
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/a", http.StatusFound) })
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			io.WriteString(w, "ok")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/cdnloop/{v}", func(w http.ResponseWriter, r *http.Request) {
		for _, v := range strings.Split(r.PathValue("v"), "|") {
			w.Header().Add("CDN-Loop", v)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tc := range []struct {
		path string
		loop bool
	}{
		{"/a", true},
		{"/hop/3", false},
		{"/hop/4", true},
		{"/cdnloop/cloudfront, fastly", false},
		{"/cdnloop/cloudfront; v=1, fastly, CloudFront", true},
		{"/cdnloop/edge|edge;host=x", true},
		{"/cdnloop/a|b", false},
	} {
		c := New(fast())
		resp, err := get(t, c, srv.URL+tc.path)
		var le *LoopError
		if got := errors.As(err, &le); got != tc.loop {
			t.Errorf("GET %s: err %v, want a loop: %v", tc.path, err, tc.loop)
		}
		if err == nil {
			resp.Body.Close()
		}
		if tc.loop && c.Stats().Retries != 0 {
			t.Errorf("GET %s: a loop was retried %d times", tc.path, c.Stats().Retries)
		}
	}
}

func TestCertificates(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	c := New(fast(), WithTLSConfig(srv.Client().Transport.(*http.Transport).TLSClientConfig))
	resp, err := get(t, c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	certs := c.Certificates()
	if len(certs) != 1 || certs[0].Host != strings.TrimPrefix(srv.URL, "https://") || certs[0].NotAfter.IsZero() || certs[0].Error != "" {
		t.Errorf("Certificates() = %+v, want the test server's", certs)
	}
	// An untrusted certificate is recorded too, with its error, and not retried.
	c = New(fast())
	if _, err := get(t, c, srv.URL); !IsTLSError(err) {
		t.Errorf("untrusted certificate: err %v, want a TLS error", err)
	}
	certs = c.Certificates()
	if len(certs) != 1 || certs[0].Error == "" || c.Stats().Retries != 0 {
		t.Errorf("untrusted: Certificates() = %+v after %d retries, want one with an error and no retry", certs, c.Stats().Retries)
	}
}

// countingConn counts the bytes written to a connection.
type countingConn struct {
	net.Conn
	written *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// TestHeaderIndexing: over HTTP/2 a header sent before costs a byte or two
// by default (its index in the compression table); WithoutHeaderIndexing
// sends it whole each time, and it arrives intact.
func TestHeaderIndexing(t *testing.T) {
	long := strings.Repeat("v", 300)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || r.Header.Get("X-Long") != long {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	perRequest := func(opts ...Option) int64 {
		var written atomic.Int64
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{conn, &written}, nil
		}
		tlsConf := WithTLSConfig(srv.Client().Transport.(*http.Transport).TLSClientConfig)
		c := New(fast(), append([]Option{tlsConf, WithDialContext(dial)}, opts...)...)
		send := func() {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodHead, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Long", long)
			resp, err := c.HTTPClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %s (not HTTP/2, or the header arrived otherwise)", resp.Proto, resp.Status)
			}
		}
		send() // the handshake, the settings, the first request
		before := written.Load()
		for range 10 {
			send()
		}
		return (written.Load() - before) / 10
	}
	indexed, literal := perRequest(), perRequest(WithoutHeaderIndexing())
	if indexed >= 300 || literal < 300 {
		t.Errorf("bytes sent a request: %d by default (want < 300), %d WithoutHeaderIndexing (want ≥ 300: the header whole)", indexed, literal)
	}
}
