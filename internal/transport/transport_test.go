package transport

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fast is a policy for tests: tiny delays so retries do not slow the run.
func fast() Policy {
	p := DefaultPolicy()
	p.BaseDelay, p.MaxDelay = time.Millisecond, 5*time.Millisecond
	return p
}

func get(t *testing.T, c *Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.HTTPClient().Do(req)
}

func TestBackoffBounds(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{-1, 100 * time.Millisecond},
		{0, 100 * time.Millisecond},
		{1, 200 * time.Millisecond},
		{2, 400 * time.Millisecond},
		{5, 3200 * time.Millisecond},
		{6, 5 * time.Second},
		{40, 5 * time.Second},
		{1000, 5 * time.Second},
	} {
		if got := p.Ceiling(tc.n); got != tc.want {
			t.Errorf("Ceiling(%d) = %v, want %v", tc.n, got, tc.want)
		}
		var lo, hi time.Duration = tc.want, 0
		for range 2000 {
			d := p.Delay(tc.n)
			if d <= 0 || d > tc.want {
				t.Fatalf("Delay(%d) = %v, want in (0, %v]", tc.n, d, tc.want)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		// Full jitter spreads over the whole range, not near its top.
		if lo > tc.want/10 || hi < tc.want*9/10 {
			t.Errorf("Delay(%d) over 2000 draws spans [%v, %v], want about (0, %v]", tc.n, lo, hi, tc.want)
		}
	}
	for _, q := range []Policy{DefaultPolicy(), {MaxAttempts: 10}, {MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: time.Second}} {
		b := q.Backoff()
		q = q.WithDefaults()
		if b.Steps != q.MaxAttempts || b.Cap != 0 || b.Duration <= 0 {
			t.Errorf("%+v.Backoff() = %+v, want %d steps and no Cap (which would end the retries)", q, b, q.MaxAttempts)
		}
		// The largest wait, jitter included, stays within MaxDelay.
		d := float64(b.Duration)
		for i := 0; i < b.Steps-1; i++ {
			if top := time.Duration(d * (1 + b.Jitter)); top > q.MaxDelay+time.Millisecond {
				t.Errorf("%+v.Backoff() wait %d can reach %v, over MaxDelay %v", q, i, top, q.MaxDelay)
			}
			d *= b.Factor
		}
	}
	if b := DefaultPolicy().Backoff(); b.Duration != 100*time.Millisecond || b.Factor != 2 {
		t.Errorf("default Backoff() = %+v, want 100ms doubling", b)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	huge := time.Duration(1<<63 - 1)
	for _, tc := range []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"120", 120 * time.Second, true},
		{" 3 ", 3 * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"Tue, 01 Dec 2026 10:01:30 GMT", 90 * time.Second, true},
		{"Tuesday, 01-Dec-26 10:00:10 GMT", 10 * time.Second, true},
		{"Tue Dec  1 10:00:05 2026", 5 * time.Second, true},
		{"Tue, 01 Dec 2026 09:00:00 GMT", 0, true},
		{"Tue, 01 Dec 2026 10:01:30", 0, false},
		{"9999999999", huge, true},
		{"99999999999999999999999", huge, true},
	} {
		got, ok := ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestWhatIsRetried(t *testing.T) {
	for _, tc := range []struct {
		status   int
		attempts int64
	}{
		{200, 1}, {206, 1}, {304, 1}, {400, 1}, {401, 1}, {403, 1}, {404, 1}, {405, 1}, {410, 1},
		{500, 1}, {501, 1}, {429, 3}, {502, 3}, {503, 3}, {504, 3},
	} {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.WriteHeader(tc.status)
		}))
		p := fast()
		p.MaxAttempts = 3
		c := New(p)
		resp, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatalf("status %d: %v", tc.status, err)
		}
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != tc.status || n.Load() != tc.attempts || c.Stats().Requests != tc.attempts {
			t.Errorf("status %d: got %d after %d attempts (client counted %d), want %d attempts",
				tc.status, resp.StatusCode, n.Load(), c.Stats().Requests, tc.attempts)
		}
	}
}

func TestRetryableError(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"reset", op(syscall.ECONNRESET), true},
		{"refused", op(syscall.ECONNREFUSED), true},
		{"broken pipe", op(syscall.EPIPE), true},
		{"closed early", fmt.Errorf("reading: %w", io.EOF), true},
		{"truncated", io.ErrUnexpectedEOF, true},
		{"deadline", context.DeadlineExceeded, true},
		{"timeout", &net.DNSError{Err: "i/o timeout", IsTimeout: true}, true},
		{"dns temporary", &net.DNSError{Err: "server misbehaving", IsTemporary: true}, true},
		{"dns not found", &net.DNSError{Err: "no such host", IsNotFound: true}, false},
		{"cancelled", context.Canceled, false},
		{"loop", &LoopError{URL: "u", Reason: "r"}, false},
		{"unknown authority", fmt.Errorf("x: %w", x509.UnknownAuthorityError{}), false},
		{"expired", x509.CertificateInvalidError{Reason: x509.Expired}, false},
		{"other", errors.New("unsupported protocol scheme"), false},
	} {
		if got := RetryableError(tc.err); got != tc.want {
			t.Errorf("RetryableError(%s: %v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestBudget: a client whose every request gets a 503 makes about
// RetryFloor/2 retries and then fails fast; good answers refill the bucket,
// but never above RetryFloor, however many; a flapping server gets retries
// within 10% of requests plus the floor.
func TestBudget(t *testing.T) {
	var mode atomic.Int64 // 0 down, 1 up, 2 every other request fails
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case 0:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			if n.Add(1)%2 == 0 {
				w.WriteHeader(http.StatusBadGateway)
			}
		}
	}))
	defer srv.Close()
	p := fast()
	p.RetryFloor, p.RetryRatio, p.MaxAttempts = 10, 0.1, 4
	p.BreakerFailures = -1 // the budget alone (the breaker: TestBreaker)
	c := New(p)
	do := func(k int) Stats {
		before := c.Stats()
		for range k {
			resp, err := get(t, c, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		after := c.Stats()
		return Stats{Requests: after.Requests - before.Requests, Retries: after.Retries - before.Retries, RetriesDenied: after.RetriesDenied - before.RetriesDenied}
	}
	// 10 tokens: failures 1..4 leave 9, 8, 7, 6 (retried); the 5th leaves 5: no more.
	if s := do(20); s.Retries != 3 || s.Requests != 23 || s.RetriesDenied != 19 {
		t.Errorf("20 requests to a dead server: %+v, want 3 retries in 23 requests, 19 denied", s)
	}
	mode.Store(1)
	do(30) // 0 + 3 tokens: still not above half
	mode.Store(0)
	if s := do(5); s.Retries != 0 {
		t.Errorf("after 30 good answers, a dead server got %d retries, want 0 (the bucket is at 3 of 10)", s.Retries)
	}
	mode.Store(1)
	do(500) // full again, and no fuller
	mode.Store(0)
	if s := do(10); s.Retries != 3 {
		t.Errorf("after 500 good answers, a dead server got %d retries, want 3 (as from a fresh client: the bucket holds 10, never more)", s.Retries)
	}
	mode.Store(2)
	s := do(300)
	if limit := float64(p.RetryFloor)/2 + p.RetryRatio*float64(s.Requests); float64(s.Retries) > limit+1 {
		t.Errorf("a server failing every other request: %+v, more retries than the budget %.1f", s, limit)
	}
}

func TestRetryAfter(t *testing.T) {
	var n atomic.Int64
	var date atomic.Value // /date's Retry-After, a string set before it is asked
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/once":
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, "ok")
		case "/date":
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After", date.Load().(string))
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, "ok")
		case "/hour":
			n.Add(1)
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	clk := newTestClock()
	c := New(fast(), WithClock(clk))
	resp, err := get(t, c, srv.URL+"/once")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The wait is the clock's: asked for, not slept.
	if waits := clk.Waits(); resp.StatusCode != 200 || len(waits) != 1 || waits[0] < time.Second || waits[0] > time.Second+fast().MaxDelay {
		t.Errorf("429 Retry-After: 1 then 200: got %d after waits %v, want 200 after one wait of 1s plus at most the jitter %v", resp.StatusCode, waits, fast().MaxDelay)
	}
	// An HTTP date is read against the client's clock, not the system's.
	// (An HTTP date has whole seconds: the wait is to that second.)
	n.Store(0)
	at := clk.Now().Add(2 * time.Second).Truncate(time.Second)
	want := at.Sub(clk.Now())
	date.Store(at.UTC().Format(http.TimeFormat))
	resp, err = get(t, c, srv.URL+"/date")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if waits := clk.Waits(); resp.StatusCode != 200 || len(waits) != 2 || waits[1] < want || waits[1] > want+fast().MaxDelay {
		t.Errorf("429 Retry-After: a date %v ahead of the client's clock, then 200: got %d after waits %v, want a second wait of %v plus the jitter", want, resp.StatusCode, waits, want)
	}
	n.Store(0)
	resp, err = get(t, c, srv.URL+"/hour")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || n.Load() != 1 {
		t.Errorf("Retry-After: 3600 (over the 30s cap): got %d after %d attempts, want the 503 at once", resp.StatusCode, n.Load())
	}
}

// TestHostCap: requests in flight to one host never exceed the cap, over
// HTTP/1.1 and over HTTP/2 (where one connection carries many streams).
func TestHostCap(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		var inFlight, peak atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			inFlight.Add(-1)
		}))
		srv.EnableHTTP2 = h2
		srv.StartTLS()
		p := fast()
		p.MaxConnsPerHost = 4
		c := New(p, WithTLSConfig(srv.Client().Transport.(*http.Transport).TLSClientConfig))
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				resp, err := get(t, c, srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				if h2 && resp.ProtoMajor != 2 {
					t.Errorf("got %s, want HTTP/2", resp.Proto)
				}
				resp.Body.Close()
			})
		}
		wg.Wait()
		srv.Close()
		if peak.Load() > 4 || peak.Load() < 2 {
			t.Errorf("HTTP/2 %v: peak requests in flight %d, want 2..4 (the cap)", h2, peak.Load())
		}
	}
}

func TestRateLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	p := fast()
	p.Rate, p.Burst = 50, 1
	c := New(p)
	start := time.Now()
	for range 11 {
		resp, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if d := time.Since(start); d < 190*time.Millisecond {
		t.Errorf("11 requests at 50/s took %v, want at least 200ms", d)
	}
}
