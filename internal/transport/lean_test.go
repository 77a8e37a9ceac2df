package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func head(t *testing.T, c *Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodHead, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.HTTPClient().Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

// countConns counts the connections srv accepts.
func countConns(srv *httptest.Server) *atomic.Int64 {
	var n atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

// TestLeanHeads holds WithLeanHeads' path to net/http's answers: the same
// statuses, lengths and headers, keep-alive on one connection, and the
// policy above it (retries, Retry-After, CDN-Loop, redirects).
func TestLeanHeads(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead && r.URL.Path != "/get" {
			t.Errorf("%s %s, want HEAD", r.Method, r.URL.Path)
		}
		switch r.URL.Path {
		case "/flaky":
			if calls.Add(1) == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		case "/loop":
			w.Header().Add("CDN-Loop", "cdn-a, cdn-b")
			w.Header().Add("CDN-Loop", "CDN-A")
		case "/moved":
			http.Redirect(w, r, "/a.js", http.StatusMovedPermanently)
			return
		case "/gone":
			w.WriteHeader(http.StatusNotFound)
			return
		case "/close":
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(r.URL.Path)*100))
		w.Header().Set("X-Path", r.URL.Path)
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	c := New(fast(), WithLeanHeads())

	for _, tc := range []struct {
		path   string
		status int
		length int64
		err    string
	}{
		{"/a.js", 200, 500, ""},
		{"/b/c.css", 200, 800, ""},
		{"/gone", 404, -1, ""},
		{"/flaky", 200, 600, ""},
		{"/moved", 200, 500, ""},
		{"/loop", 0, 0, "CDN-Loop names cdn-a more than once"},
	} {
		resp, err := head(t, c, srv.URL+tc.path)
		switch {
		case tc.err != "":
			var le *LoopError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("HEAD %s: %v, want a *LoopError %q", tc.path, err, tc.err)
			}
		case err != nil:
			t.Errorf("HEAD %s: %v", tc.path, err)
		case resp.StatusCode != tc.status || (tc.length >= 0 && resp.ContentLength != tc.length):
			t.Errorf("HEAD %s: %d, %d bytes, want %d, %d bytes", tc.path, resp.StatusCode, resp.ContentLength, tc.status, tc.length)
		case tc.status == 200 && tc.path != "/moved" && resp.Header.Get("X-Path") != tc.path:
			t.Errorf("HEAD %s: answered for %q", tc.path, resp.Header.Get("X-Path"))
		}
	}
	if s := c.Stats(); s.Retries != 1 || s.Requests != 8 {
		t.Errorf("stats %+v, want 8 requests (the redirect and the retry included), 1 retry", s)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for requests one after another, want 1 (kept alive)", n)
	}
	// Connection: close is honoured: the next request dials anew.
	head(t, c, srv.URL+"/close")
	head(t, c, srv.URL+"/a.js")
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections after a Connection: close, want 2", n)
	}
	// Every other request goes through net/http.
	if resp, err := get(t, c, srv.URL+"/get"); err != nil {
		t.Errorf("GET: %v", err)
	} else {
		resp.Body.Close()
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections after a GET, want 3 (net/http's own)", n)
	}
}

// rawServer serves each connection with answer, which reads requests
// from br and writes raw bytes to conn.
func rawServer(t *testing.T, answer func(n int, conn net.Conn, br *bufio.Reader)) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(conns.Add(1))
			go func() {
				defer conn.Close()
				answer(n, conn, bufio.NewReader(conn))
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &conns
}

// signalled waits for ch, the server's word that it did what the test
// waits on, failing the test after ten seconds without it.
func signalled(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s in 10 s", what)
	}
}

// readRequest reads one request's head, returning its path ("" at EOF).
func readRequest(br *bufio.Reader) string {
	req, err := http.ReadRequest(br)
	if err != nil {
		return ""
	}
	return req.URL.Path
}

// TestLeanHeadsBinding attacks the binding of a response to its request:
// bytes after a HEAD response (a second response, sent before it was asked
// for) never answer the next request; an idle connection the server
// closed is replaced; a server that never answers is a timeout.
func TestLeanHeadsBinding(t *testing.T) {
	t.Run("unsolicited response", func(t *testing.T) {
		url, conns := rawServer(t, func(n int, conn net.Conn, br *bufio.Reader) {
			for {
				p := readRequest(br)
				if p == "" {
					return
				}
				if p == "/first" {
					// The answer, and a false 200 for whatever comes next.
					fmt.Fprint(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"+
						"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
					continue
				}
				fmt.Fprint(conn, "HTTP/1.1 410 Gone\r\nContent-Length: 0\r\n\r\n")
			}
		})
		c := New(fast(), WithLeanHeads())
		if resp, err := head(t, c, url+"/first"); err != nil || resp.StatusCode != 404 {
			t.Fatalf("first: %v, %v", resp, err)
		}
		time.Sleep(10 * time.Millisecond)
		resp, err := head(t, c, url+"/second")
		if err != nil || resp.StatusCode != 410 {
			t.Errorf("second: %v, %v; want its own answer, 410 (not the unsolicited 200)", resp, err)
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d connections, want 2 (the one with bytes left over is not reused)", n)
		}
	})
	t.Run("left over in the same read", func(t *testing.T) {
		// The unsolicited bytes come in the response's own segment: they
		// are in the buffer when the response is parsed.
		url, conns := rawServer(t, func(n int, conn net.Conn, br *bufio.Reader) {
			for readRequest(br) != "" {
				if n == 1 {
					conn.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"))
					continue
				}
				conn.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
			}
		})
		c := New(fast(), WithLeanHeads())
		for i := range 3 {
			if resp, err := head(t, c, url+"/x"); err != nil || resp.StatusCode != 404 {
				t.Errorf("request %d: %v, %v, want 404", i, resp, err)
			}
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d connections, want 2", n)
		}
	})
	t.Run("unsolicited response while idle", func(t *testing.T) {
		// The false 200 comes on its own, after the answer was read: the
		// idle connection is checked before it is used again.
		// The client goes on once the false 200 was written (not after a
		// sleep that a loaded machine can outlast): on loopback its bytes
		// are then in the client's socket.
		stray := make(chan struct{}, 1)
		url, conns := rawServer(t, func(n int, conn net.Conn, br *bufio.Reader) {
			for readRequest(br) != "" {
				fmt.Fprint(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
				if n == 1 {
					time.Sleep(20 * time.Millisecond)
					fmt.Fprint(conn, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
					stray <- struct{}{}
				}
			}
		})
		c := New(fast(), WithLeanHeads())
		for i := range 3 {
			if resp, err := head(t, c, url+"/x"); err != nil || resp.StatusCode != 404 {
				t.Errorf("request %d: %v, %v, want 404", i, resp, err)
			}
			if i == 0 {
				signalled(t, stray, "the false 200 written")
			}
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d connections, want 2", n)
		}
	})
	t.Run("idle connection closed by the server", func(t *testing.T) {
		// The client goes on once the server closed (not after a sleep
		// that a loaded machine can outlast).
		closed := make(chan struct{}, 3)
		url, conns := rawServer(t, func(n int, conn net.Conn, br *bufio.Reader) {
			if readRequest(br) != "" {
				fmt.Fprint(conn, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n")
			}
			// and closes the connection without saying so
			conn.Close()
			closed <- struct{}{}
		})
		c := New(fast(), WithLeanHeads())
		for i := range 3 {
			if resp, err := head(t, c, url+"/x"); err != nil || resp.StatusCode != 200 {
				t.Errorf("request %d: %v, %v", i, resp, err)
			}
			signalled(t, closed, "the server's close")
		}
		if s := c.Stats(); s.Retries != 0 {
			t.Errorf("%d retries, want 0 (a stale idle connection is replaced, not retried)", s.Retries)
		}
		if n := conns.Load(); n != 3 {
			t.Errorf("%d connections, want 3", n)
		}
	})
	t.Run("never answers", func(t *testing.T) {
		url, _ := rawServer(t, func(n int, conn net.Conn, br *bufio.Reader) {
			readRequest(br)
			time.Sleep(2 * time.Second)
		})
		p := fast()
		p.Timeout, p.MaxAttempts = 100*time.Millisecond, 2
		c := New(p, WithLeanHeads())
		start := time.Now()
		_, err := head(t, c, url+"/x")
		var ne net.Error
		if err == nil || !(errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
			t.Errorf("err %v, want a timeout", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v, want about 2 × 100 ms", d)
		}
		if s := c.Stats(); s.Requests != 2 {
			t.Errorf("%d attempts, want 2 (retried under the policy)", s.Requests)
		}
	})
	t.Run("oversized headers", func(t *testing.T) {
		url, _ := rawServer(t, func(n int, conn net.Conn, br *bufio.Reader) {
			readRequest(br)
			fmt.Fprint(conn, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Big: ")
			chunk := []byte(strings.Repeat("a", 64<<10))
			for range (leanMaxHeaderBytes >> 16) + 2 {
				if _, err := conn.Write(chunk); err != nil {
					return
				}
			}
		})
		p := fast()
		p.MaxAttempts = 1
		c := New(p, WithLeanHeads())
		if resp, err := head(t, c, url+"/x"); err == nil {
			t.Errorf("got %d, want an error for headers over %d bytes", resp.StatusCode, leanMaxHeaderBytes)
		}
	})
	t.Run("interim response", func(t *testing.T) {
		// A 1xx before the answer: the request is asked again through
		// net/http, which skips it.
		url, _ := rawServer(t, func(n int, conn net.Conn, br *bufio.Reader) {
			for readRequest(br) != "" {
				fmt.Fprint(conn, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n")
			}
		})
		c := New(fast(), WithLeanHeads())
		if resp, err := head(t, c, url+"/x"); err != nil || resp.StatusCode != 200 || resp.ContentLength != 7 {
			t.Errorf("%v, %v, want 200 of 7 bytes", resp, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		url, _ := rawServer(t, func(n int, conn net.Conn, br *bufio.Reader) {
			readRequest(br)
			time.Sleep(2 * time.Second)
		})
		c := New(fast(), WithLeanHeads())
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, url+"/x", nil)
		start := time.Now()
		if _, err := c.HTTPClient().Do(req); !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v after a cancel at 50 ms", d)
		}
	})
}

// TestLeanHeadsGuards: the lean path dials through the client's dialer, so
// a denied address is refused, and a proxy takes the request to net/http.
func TestLeanHeadsGuards(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c := New(fast(), WithLeanHeads(), WithDeniedAddresses(netip.MustParsePrefix("127.0.0.0/8")))
	var de *DeniedAddressError
	if _, err := head(t, c, srv.URL+"/x"); !errors.As(err, &de) {
		t.Errorf("err %v, want a *DeniedAddressError", err)
	}
	p := New(fast(), WithLeanHeads())
	p.base.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: "127.0.0.1:1"})
	req, _ := http.NewRequest(http.MethodHead, "http://cdn.example/x", nil)
	if p.leanable(req) {
		t.Error("a request through a proxy goes by the lean path")
	}
}
