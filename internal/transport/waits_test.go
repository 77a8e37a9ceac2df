package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestWaits: what was in flight when a deadline passed is what Pending
// names, by host, with its last failure; work that sent nothing leaves
// nothing pending, whatever the requests before it did.
func TestWaits(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			<-release
		case "/half":
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("part of it"))
			w.(http.Flusher).Flush()
			<-release
		case "/busy":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	defer close(release) // before the server closes: it waits for its handlers
	host := strings.TrimPrefix(srv.URL, "http://")

	// run does work under a deadline of 300 ms in a context that carries a
	// Waits, and returns what was pending at the deadline.
	run := func(t *testing.T, c *Client, work func(ctx context.Context)) []Pending {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		ctx, w := WithWaits(ctx)
		work(ctx)
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // the requests see the deadline and end
		return w.Pending()
	}
	get := func(ctx context.Context, c *Client, path string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		return c.HTTPClient().Do(req)
	}
	slow := fast()
	slow.BaseDelay, slow.MaxDelay = 2*time.Second, 2*time.Second

	for _, tc := range []struct {
		name   string
		policy Policy
		work   func(ctx context.Context, c *Client)
		want   string // the host pending, or ""
		cause  string // in its Cause
	}{
		{"a request with no answer", fast(), func(ctx context.Context, c *Client) { get(ctx, c, "/hang") }, host, ""},
		{"a body still being read", fast(), func(ctx context.Context, c *Client) {
			resp, err := get(ctx, c, "/half")
			if err == nil {
				io.ReadAll(resp.Body)
				resp.Body.Close()
			}
		}, host, ""},
		{"the backoff between retries", slow, func(ctx context.Context, c *Client) { get(ctx, c, "/busy") }, host, "503"},
		{"own work after the requests ended", fast(), func(ctx context.Context, c *Client) {
			for range 3 {
				resp, err := get(ctx, c, "/ok")
				if err == nil {
					io.ReadAll(resp.Body) // read to its end, not closed
				}
			}
			resp, err := get(ctx, c, "/busy") // a failure, over
			if err == nil {
				resp.Body.Close()
			}
			<-ctx.Done() // then lockstep's own work until the deadline
		}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(tc.policy)
			got := run(t, c, func(ctx context.Context) { tc.work(ctx, c) })
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("pending at the deadline: %+v, want none (own work)", got)
				}
				return
			}
			if len(got) != 1 || got[0].Name != tc.want || !got[0].Request || got[0].Calls < 1 {
				t.Fatalf("pending at the deadline: %+v, want the request to %s", got, tc.want)
			}
			if tc.cause != "" && (got[0].Cause == nil || !strings.Contains(got[0].Cause.Error(), tc.cause)) {
				t.Errorf("cause %v, want one saying %q", got[0].Cause, tc.cause)
			}
		})
	}

	t.Run("named waits and causes", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		ctx, w := WithWaits(ctx)
		if WaitsFrom(ctx) != w || WaitsFrom(context.Background()) != nil {
			t.Fatal("WaitsFrom does not return the context's Waits")
		}
		var none *Waits
		none.Begin("x")()
		none.Fail("x", errors.New("nothing"))
		if none.Pending() != nil {
			t.Error("a nil Waits has pending waits")
		}
		done := w.Begin("the running image")
		w.Fail("the running image", errors.New("no such container acme-wbe"))
		w.Begin("probe")()
		cancel()
		done() // after the end: still pending
		w.Fail("the running image", &url.Error{Op: "Get", URL: "x", Err: context.Canceled})
		got := w.Pending()
		if len(got) != 1 || got[0].Name != "the running image" || got[0].Request || got[0].Cause == nil ||
			got[0].Cause.Error() != "no such container acme-wbe" {
			t.Fatalf("pending %+v, want the running image with its cause before the end", got)
		}
		w.Begin("later")()
		if len(w.Pending()) != 1 {
			t.Error("a wait begun after the end counts")
		}
	})
}
