package cdn

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// TestOneHTTP2Connection: a check of many assets on an HTTP/2 CDN opens
// one connection, not one per request in flight; on HTTP/1.1 it opens
// up to the per-host cap, as before.
func TestOneHTTP2Connection(t *testing.T) {
	for _, h2 := range []bool{true, false} {
		files := map[string]string{}
		for i := range 200 {
			files[fmt.Sprintf("a/%03d.js", i)] = body
		}
		var conns atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h2 != (r.ProtoMajor == 2) {
				w.WriteHeader(http.StatusHTTPVersionNotSupported)
				return
			}
			http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
		}))
		srv.EnableHTTP2 = h2
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.StartTLS()
		p := transport.DefaultPolicy()
		p.MaxConnsPerHost = 32
		client := transport.New(p, transport.WithTLSConfig(srv.Client().Transport.(*http.Transport).TLSClientConfig))
		rep, err := Check(context.Background(), assets(files, srv.URL), Options{Client: client, Concurrency: 32})
		srv.Close()
		if err != nil || rep.Err() != nil {
			t.Fatalf("HTTP/2 %v: %v, %v", h2, err, rep.Err())
		}
		if n := conns.Load(); (h2 && n != 1) || (!h2 && (n < 2 || n > 32)) {
			t.Errorf("HTTP/2 %v: %d connections for 200 assets at 32 in flight, want %s", h2, n, map[bool]string{true: "1", false: "2..32"}[h2])
		}
	}
}

// TestFirstRequestHoldsBackOnlyItsConnection: the rest of the assets wait
// for the first request's connection, not for its answer: a first asset
// that answers only once every other one was asked for does not stall
// the check.
func TestFirstRequestHoldsBackOnlyItsConnection(t *testing.T) {
	const n = 20
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("%02d.js", i)] = body
	}
	var others atomic.Int64
	allAsked := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/00.js" { // the first asset, by path
			select {
			case <-allAsked:
			case <-time.After(5 * time.Second):
				w.WriteHeader(http.StatusTeapot) // held back until it answered
				return
			}
		} else if others.Add(1) == n-1 {
			close(allAsked)
		}
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
	defer srv.Close()
	p := transport.DefaultPolicy()
	p.MaxConnsPerHost = 8
	rep, err := Check(context.Background(), assets(files, srv.URL), Options{Client: transport.New(p), Concurrency: 8})
	if err != nil || rep.Err() != nil {
		t.Fatalf("%v, %v (the first asset: %+v)", err, rep.Err(), rep.Results[0])
	}
}

// TestFirstRequestUnreachable: a base whose first request cannot connect
// still has every asset checked (and reported unreachable).
func TestFirstRequestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	files := map[string]string{"a.js": body, "b.js": body, "c.js": body}
	rep, err := Check(context.Background(), assets(files, dead), Options{Client: fastClient(), Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Unreachable != 3 {
		t.Errorf("dead base: %+v, want 3 unreachable", rep.Summary)
	}
}
