package ggcrretry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	ggcrtransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// TestOptions: go-containerregistry sends through the client's transport
// (its requests count in the client's Stats).
func TestOptions(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := transport.New(transport.DefaultPolicy())
	opts := Options(c)
	if err := remote.Write(ref, img, opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(ref, opts...); err != nil {
		t.Fatal(err)
	}
	if c.Stats().Requests == 0 {
		t.Errorf("remote.Write and Head sent %d requests through the client, want some", c.Stats().Requests)
	}
}

// TestBackoff pins the shape: MaxAttempts steps, no Cap (in
// go-containerregistry's shape a Cap ends the retries), the first wait
// BaseDelay, doubling, and the factor lowered where doubling would take a
// wait, jitter included, past MaxDelay.
func TestBackoff(t *testing.T) {
	tests := []struct {
		p     transport.Policy
		waits []time.Duration // before jitter
	}{
		{transport.Policy{MaxAttempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: 5 * time.Second}, []time.Duration{100e6, 200e6, 400e6}},
		{transport.Policy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 800 * time.Millisecond}, []time.Duration{100e6, 158.74e6, 251.98e6, 400e6}},
		{transport.Policy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: time.Second}, []time.Duration{500e6, 500e6}},
	}
	for _, tt := range tests {
		b := Backoff(tt.p)
		if b.Steps != tt.p.MaxAttempts || b.Cap != 0 {
			t.Errorf("Backoff(%+v) = %+v, want %d steps and no Cap (which would end the retries)", tt.p, b, tt.p.MaxAttempts)
		}
		d := float64(b.Duration)
		for i, w := range tt.waits {
			if math.Abs(d-float64(w)) > 1e6 {
				t.Errorf("Backoff(%+v) wait %d = %v, want %v", tt.p, i, time.Duration(d), w)
			}
			if time.Duration(d*(1+b.Jitter)) > tt.p.MaxDelay {
				t.Errorf("Backoff(%+v) wait %d can reach %v, over MaxDelay", tt.p, i, time.Duration(d*(1+b.Jitter)))
			}
			d *= b.Factor
		}
	}
	if d := Backoff(transport.Policy{}); d.Steps != transport.DefaultPolicy().MaxAttempts {
		t.Errorf("Backoff(zero policy) = %+v, want the default policy's", d)
	}
}

func TestRetryable(t *testing.T) {
	status := func(code int) error {
		return &url.Error{Op: "Get", URL: "http://127.0.0.1/v2/", Err: retryStatusError(t, code)}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a retried status (503)", status(http.StatusServiceUnavailable), true},
		{"a retried status (429)", status(http.StatusTooManyRequests), true},
		{"reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"EOF before the response", &url.Error{Op: "Get", Err: io.EOF}, true},
		{"an attempt's timeout", &url.Error{Op: "Get", Err: timeoutError{}}, true},
		{"cancelled", &url.Error{Op: "Get", Err: context.Canceled}, false},
		{"the request's context ended", &doneError{&url.Error{Op: "Get", Err: context.DeadlineExceeded}}, false},
		{"a loop", &transport.LoopError{}, false},
		{"TLS", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, false},
		{"anything else", errors.New("x"), false},
	}
	for _, tt := range tests {
		if got := retryable(tt.err); got != tt.want {
			t.Errorf("retryable(%s: %v) = %t, want %t", tt.name, tt.err, got, tt.want)
		}
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// retryStatusError is the error go-containerregistry's retryer hands its
// predicate for a status of WithRetryStatusCodes: captured from a real
// retryer, whose predicate sees it.
func retryStatusError(t *testing.T, code int) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
	defer srv.Close()
	var seen error
	rt := ggcrtransport.NewRetry(http.DefaultTransport,
		ggcrtransport.WithRetryStatusCodes(code),
		ggcrtransport.WithRetryBackoff(ggcrtransport.Backoff{Steps: 1}),
		ggcrtransport.WithRetryPredicate(func(err error) bool { seen = err; return false }))
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	if seen == nil {
		t.Fatalf("the retryer's predicate saw no error for status %d", code)
	}
	return seen
}

// failingRegistry is an in-memory registry holding app:v1 whose manifest
// GETs answer the status in code while fail is positive (each such answer
// decrements it); manifests counts manifest GETs.
type failingRegistry struct {
	ref                   name.Reference
	fail, code, manifests atomic.Int64
}

func newFailingRegistry(t *testing.T) *failingRegistry {
	t.Helper()
	reg := registry.New()
	f := &failingRegistry{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodGet {
			f.manifests.Add(1)
			if f.fail.Add(-1) >= 0 {
				w.WriteHeader(int(f.code.Load()))
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.ref, _ = name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/app:v1")
	img, _ := random.Image(64, 1)
	if err := remote.Write(f.ref, img); err != nil {
		t.Fatal(err)
	}
	return f
}

// fast is the default policy with millisecond backoff.
var fast = transport.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

// TestRetries: through a registry, the retried statuses are retried up to
// MaxAttempts and a 500 is not; a cancelled request is not retried.
func TestRetries(t *testing.T) {
	f := newFailingRegistry(t)
	for _, tt := range []struct {
		code, fails int
		ok          bool
		gets        int64
	}{
		{http.StatusServiceUnavailable, 3, true, 4},
		{http.StatusServiceUnavailable, 4, false, 4},
		{http.StatusTooManyRequests, 1, true, 2},
		{http.StatusInternalServerError, 1, false, 1},
	} {
		f.code.Store(int64(tt.code))
		f.fail.Store(int64(tt.fails))
		f.manifests.Store(0)
		_, err := remote.Get(f.ref, Options(transport.New(fast))...) // a fresh budget
		if (err == nil) != tt.ok || f.manifests.Load() != tt.gets {
			t.Errorf("Get through %d × %d: err %v after %d GETs, want ok=%t after %d", tt.fails, tt.code, err, f.manifests.Load(), tt.ok, tt.gets)
		}
	}
	f.fail.Store(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := remote.Get(f.ref, append(Options(transport.New(fast)), remote.WithContext(ctx))...); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestBudget: go-containerregistry's retries spend the client's retry
// budget: against a registry that keeps failing, the first request makes
// its retries and the next ones fail fast, also those of another caller
// of the same client; good answers earn the budget back.
func TestBudget(t *testing.T) {
	f := newFailingRegistry(t)
	f.code.Store(http.StatusServiceUnavailable)
	c := transport.New(fast)
	f.fail.Store(1 << 30)
	var gets []int64
	for range 4 {
		f.manifests.Store(0)
		if _, err := remote.Get(f.ref, Options(c)...); err == nil {
			t.Fatal("Get through 503s succeeded")
		}
		gets = append(gets, f.manifests.Load())
	}
	// 10 tokens: the first request's 4 failures leave 6; each request's
	// ping (a good answer) earns 0.1, so the second request may retry once
	// (5.1 > 5) and then no more.
	if want := []int64{4, 2, 1, 1}; fmt.Sprint(gets) != fmt.Sprint(want) {
		t.Errorf("manifest GETs of four requests to a failing registry = %v, want %v (4 retries, then the budget is spent)", gets, want)
	}
	f.fail.Store(0)
	for range 40 { // a ping and a HEAD each: 80 good answers earn 8 tokens back
		if _, err := remote.Head(f.ref, Options(c)...); err != nil {
			t.Fatal(err)
		}
	}
	f.fail.Store(1)
	f.manifests.Store(0)
	if _, err := remote.Get(f.ref, Options(c)...); err != nil || f.manifests.Load() != 2 {
		t.Errorf("after good answers, Get through one 503 = %v after %d GETs, want a retry", err, f.manifests.Load())
	}
}
