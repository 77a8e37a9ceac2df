package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testClock is a clock the test moves (WithClock): a breaker's cool-down
// ends, and a retry's wait is over, when the test says, however slow the
// machine. After records each wait asked for and returns at once, the
// clock moved on by it.
type testClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newTestClock() *testClock { return &testClock{now: time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d on.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *testClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// Waits returns the waits asked of After so far.
func (c *testClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// TestBreaker: BreakerFailures retryable failures in a row open a host's
// breaker (the request whose attempt opened it gets that attempt's
// answer, not a retry); while open, requests to the host fail at once and
// send nothing; after the cool-down one probe goes, and its failure
// reopens the breaker for a longer cool-down, its answer closes it. An
// answer between failures resets the count, and another host is not
// affected.
func TestBreaker(t *testing.T) {
	var up atomic.Bool
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer other.Close()
	const cooldown = 60 * time.Millisecond
	p := fast()
	p.MaxAttempts, p.RetryFloor = 4, 100
	p.BreakerFailures, p.BreakerCooldown, p.MaxDelay = 3, cooldown, 4*cooldown
	clk := newTestClock()
	c := New(p, WithClock(clk))
	status := func(url string) (int, error) {
		t.Helper()
		resp, err := get(t, c, url)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	open := func(what string, err error, lo, hi time.Duration) {
		t.Helper()
		var ce *CircuitOpenError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: err = %v, want a *CircuitOpenError", what, err)
		}
		if ce.Wait <= 0 || ce.Wait < lo-5*time.Millisecond || ce.Wait > hi || !RetryableError(err) {
			t.Errorf("%s: %v: wait %v, want within [%v, %v], retryable", what, err, ce.Wait, lo, hi)
		}
	}

	// Two failures, an answer, two failures: never three in a row.
	up.Store(false)
	p1 := fast()
	p1.MaxAttempts, p1.RetryFloor, p1.BreakerFailures = 2, 100, 3
	flaky := New(p1)
	for i := range 2 {
		resp, err := get(t, flaky, srv.URL)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		resp.Body.Close()
		up.Store(true)
		if resp, err = get(t, flaky, srv.URL); err != nil || resp.StatusCode != 200 {
			t.Fatalf("round %d: an answer: %v", i, err)
		}
		resp.Body.Close()
		up.Store(false)
	}

	// The first request's third attempt opens the breaker: three sent,
	// the third's 503 returned.
	hits.Store(0)
	if code, err := status(srv.URL); code != http.StatusServiceUnavailable || err != nil || hits.Load() != 3 {
		t.Fatalf("first request to a dead host: %d, %v after %d attempts, want its 503 after 3", code, err, hits.Load())
	}
	_, err := status(srv.URL)
	open("while open", err, 0, cooldown)
	if hits.Load() != 3 || c.Stats().CircuitOpen != 1 {
		t.Errorf("while open: %d sent in all, %d refused, want 3 and 1", hits.Load(), c.Stats().CircuitOpen)
	}
	if code, err := status(other.URL); code != 200 || err != nil {
		t.Errorf("another host: %d, %v, want 200: its breaker is its own", code, err)
	}

	// After the cool-down, one probe: it fails, and the next cool-down is
	// twice as long.
	var ce *CircuitOpenError
	errors.As(err, &ce)
	// A millisecond short of it, still open, nothing sent.
	clk.Advance(ce.Wait - time.Millisecond)
	_, err = status(srv.URL)
	open("a millisecond before the cool-down ends", err, time.Millisecond, time.Millisecond)
	if hits.Load() != 3 {
		t.Fatalf("a millisecond before the cool-down ends: %d sent in all, want 3", hits.Load())
	}
	clk.Advance(2 * time.Millisecond)
	if code, err := status(srv.URL); code != http.StatusServiceUnavailable || err != nil || hits.Load() != 4 {
		t.Fatalf("the probe: %d, %v, %d sent in all; want its 503, not retried, 4 sent", code, err, hits.Load())
	}
	_, err = status(srv.URL)
	open("after a failed probe", err, cooldown, 2*cooldown)

	// The host is back: the next probe's answer closes the breaker.
	up.Store(true)
	errors.As(err, &ce)
	clk.Advance(ce.Wait + time.Millisecond)
	for i := range 3 {
		if code, err := status(srv.URL); code != 200 || err != nil {
			t.Fatalf("request %d after recovery: %d, %v, want 200", i, code, err)
		}
	}
}

// While the probe is in flight, the other requests to the host still fail
// at once.
func TestBreakerOneProbe(t *testing.T) {
	release := make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 4 {
			<-release // the probe
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	defer close(release)
	p := fast()
	p.MaxAttempts, p.RetryFloor, p.BreakerFailures, p.BreakerCooldown = 1, 100, 3, 20*time.Millisecond
	clk := newTestClock()
	c := New(p, WithClock(clk))
	for range 3 {
		resp, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	clk.Advance(25 * time.Millisecond)
	probe := make(chan error, 1)
	go func() {
		resp, err := get(t, c, srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		probe <- err
	}()
	for hits.Load() < 4 {
		time.Sleep(time.Millisecond)
	}
	var ce *CircuitOpenError
	if _, err := get(t, c, srv.URL); !errors.As(err, &ce) {
		t.Errorf("a request beside the probe: %v, want a *CircuitOpenError", err)
	}
	release <- struct{}{}
	if err := <-probe; err != nil {
		t.Fatalf("the probe: %v", err)
	}
	resp, err := get(t, c, srv.URL)
	if err != nil {
		t.Fatalf("after the probe's answer: %v", err)
	}
	resp.Body.Close()
}

// A negative BreakerFailures turns the breakers off: a dead host is asked
// every time.
func TestBreakerOff(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	p := fast()
	p.MaxAttempts, p.RetryFloor, p.BreakerFailures = 1, 100, -1
	c := New(p)
	for range 10 {
		resp, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatalf("breaker off: %v", err)
		}
		resp.Body.Close()
	}
	if hits.Load() != 10 {
		t.Errorf("breaker off: %d of 10 requests sent", hits.Load())
	}
}

// Until waits out an open breaker until it lets a probe through, without
// spending steps of its backoff on calls that sent nothing.
func TestUntilWaitsForTheBreaker(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 4 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	p := fast()
	p.MaxAttempts, p.RetryFloor, p.BreakerFailures, p.BreakerCooldown = 1, 100, 3, 30*time.Millisecond
	c := New(p)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	refused := 0
	calls, err := Until(ctx, p, RetryableError, func(ctx context.Context) error {
		resp, err := get(t, c, srv.URL)
		if err != nil {
			var ce *CircuitOpenError
			if errors.As(err, &ce) {
				refused++
			}
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return &net503{}
		}
		return nil
	})
	// 503, 503, 503 (open), refused, probe 503 (open), refused, probe 200.
	if err != nil || hits.Load() != 5 || refused > 2 || calls > 7 {
		t.Errorf("Until = %d calls, %v; %d sent, %d refused; want 5 sent, each open breaker waited out once", calls, err, hits.Load(), refused)
	}
}

// net503 is a retryable failure for Until (a timeout, as net.Error says).
type net503 struct{}

func (*net503) Error() string   { return "503" }
func (*net503) Timeout() bool   { return true }
func (*net503) Temporary() bool { return true }

// A client that asks many hosts once each keeps no per-host state for the
// hosts it is done with: neither slots nor breakers (a fleet check asks
// 100,000 hosts).
func TestNoStatePerHostDone(t *testing.T) {
	c := New(fast())
	for range 20 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		resp, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
	}
	c.hosts.mu.Lock()
	slots := len(c.hosts.slots)
	c.hosts.mu.Unlock()
	c.breakers.mu.Lock()
	breakers := len(c.breakers.hosts)
	c.breakers.mu.Unlock()
	if slots != 0 || breakers != 0 {
		t.Errorf("after requests to 20 hosts are done: %d hosts' slots and %d breakers kept, want none", slots, breakers)
	}
}

// A probe that says nothing of the host (its caller gave up) does not
// leave the breaker waiting for it: the next request probes.
func TestBreakerProbeCancelled(t *testing.T) {
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	p := fast()
	p.MaxAttempts, p.RetryFloor, p.BreakerFailures, p.BreakerCooldown = 1, 100, 3, 20*time.Millisecond
	clk := newTestClock()
	c := New(p, WithClock(clk))
	for range 3 {
		resp, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	clk.Advance(25 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := c.HTTPClient().Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled probe: %v, want context.Canceled", err)
	}
	up.Store(true)
	resp, err := get(t, c, srv.URL)
	if err != nil {
		t.Fatalf("the request after a cancelled probe: %v, want it sent as the probe", err)
	}
	resp.Body.Close()
}
