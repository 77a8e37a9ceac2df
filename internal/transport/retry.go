package transport

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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The retry loop is written here rather than taken from go-retryablehttp:
// the budget must veto a retry after the decision and before the wait, the
// last response (a 503, a 429 asking for an hour) must reach the caller
// intact rather than as a "giving up" error, and a per-host slot must be
// released during the backoff. retryablehttp's CheckRetry/ErrorHandler
// hooks can express each of these only by working around its loop; the
// loop itself is twenty lines.

type retrying struct{ c *Client }

// RoundTrip sends req, retrying under the policy. A request with a body is
// retried only when GetBody is set.
func (r retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	c := r.c
	ctx := req.Context()
	host := hostKey(req)
	// The backoff between attempts is a wait for the host too.
	waits := WaitsFrom(ctx)
	defer waits.begin(host, true)()
	for attempt := 0; ; attempt++ {
		if attempt > 0 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, fmt.Errorf("%s %s: retrying a request whose body cannot be rewound", req.Method, req.URL)
			}
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(ctx)
			req.Body = b
		}
		// Asked last, just before the attempt: a probe the breaker lets
		// through must report its outcome (done, below).
		probe, err := c.breakers.allow(host)
		if err != nil {
			c.circuitOpen.Add(1)
			return nil, err
		}
		actx, cancel := context.WithTimeout(ctx, c.policy.Timeout)
		resp, err := roundTripper{c}.RoundTrip(req.WithContext(actx))
		retry, wait := c.decide(ctx, attempt, resp, err)
		open := c.breakers.done(host, probe, outcomeOf(ctx, resp, err))
		if !retry || open || attempt+1 >= c.policy.MaxAttempts || !c.budget.allow() {
			if retry && !open && attempt+1 < c.policy.MaxAttempts {
				c.denied.Add(1)
			}
			if err != nil {
				cancel()
				waits.Fail(host, err)
				return nil, err
			}
			resp.Body.(*body).cancel = cancel
			return resp, nil
		}
		c.retries.Add(1)
		if resp != nil {
			waits.Fail(host, fmt.Errorf("%s %s: %s", req.Method, req.URL.Redacted(), resp.Status))
			resp.Body.Close()
			c.logger.Debug("retrying", "method", req.Method, "url", req.URL.String(), "status", resp.StatusCode, "wait", wait)
		} else {
			waits.Fail(host, err)
			c.logger.Debug("retrying", "method", req.Method, "url", req.URL.String(), "err", err, "wait", wait)
		}
		cancel()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.clock.After(wait):
		}
	}
}

// decide says whether the outcome of attempt n is worth a retry and how
// long to wait first. A retryable failure is charged to the budget, an
// outcome that needs no retry earns it.
func (c *Client) decide(ctx context.Context, n int, resp *http.Response, err error) (bool, time.Duration) {
	if ctx.Err() != nil {
		return false, 0
	}
	if err != nil {
		if !RetryableError(err) {
			return false, 0
		}
		c.budget.fail()
		return true, c.policy.Delay(n)
	}
	if !RetryableStatus(resp.StatusCode) {
		c.budget.earn()
		return false, 0
	}
	c.budget.fail()
	ra, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), c.clock.Now())
	if !ok {
		return true, c.policy.Delay(n)
	}
	if ra > c.policy.MaxRetryAfter {
		return false, 0
	}
	// Never earlier than asked; the jitter on top keeps a thousand clients
	// told the same Retry-After from coming back in the same instant.
	return true, ra + c.policy.Delay(n)
}

// outcomeOf says what an attempt's result says of its host, for its
// breaker: a retryable failure, an answer, or nothing (the caller's
// context ended, or the request was refused before it was sent).
func outcomeOf(ctx context.Context, resp *http.Response, err error) outcome {
	switch {
	case ctx.Err() != nil:
		return neutral
	case err != nil && RetryableError(err):
		return failed
	case err != nil:
		return neutral
	case RetryableStatus(resp.StatusCode):
		return failed
	}
	return answered
}

// budget is the retry budget, the retry throttle of gRPC (proposal A6)
// and Finagle: a token bucket of capacity RetryFloor, full at the start;
// every retryable failure costs a token, every good outcome earns
// RetryRatio; a retry is allowed only while the bucket is more than half
// full. Retries therefore never exceed RetryFloor/2 + RetryRatio × good
// outcomes (so at most 10% of requests plus a floor), and a client facing a
// server that keeps failing stops retrying after about RetryFloor/2
// failures, until good answers fill the bucket again.
type budget struct {
	mu       sync.Mutex
	tokens   float64
	capacity float64
	ratio    float64
}

func (b *budget) fail() {
	b.mu.Lock()
	b.tokens = math.Max(0, b.tokens-1)
	b.mu.Unlock()
}

func (b *budget) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens > b.capacity/2
}

func (b *budget) earn() {
	b.mu.Lock()
	b.tokens = math.Min(b.capacity, b.tokens+b.ratio)
	b.mu.Unlock()
}

// ParseRetryAfter parses a Retry-After value (RFC 9110 10.2.3): delay
// seconds or an HTTP date, relative to now. A date in the past is 0; a
// number too large for a Duration is the largest Duration. ok is false for
// an empty or malformed value (a negative number, a fraction, garbage).
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s > int64(math.MaxInt64/time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// RetryableError reports whether a failed attempt can succeed when tried
// again: a timeout, a reset, refused or aborted connection, a connection
// closed before the response, a temporary DNS failure. Never a TLS
// verification failure, a *LoopError or a cancelled context. A
// *CircuitOpenError is retryable: the host may be back after the
// cool-down (the client itself does not retry it within a request). (A deadline
// is retryable here; the client stops anyway when the caller's own
// context has ended.)
func RetryableError(err error) bool {
	var le *LoopError
	var ce *CircuitOpenError
	var de *DeniedAddressError
	var re *RedirectError
	var ne net.Error
	var dns *net.DNSError
	switch {
	case err == nil, errors.As(err, &le), errors.As(err, &de), errors.As(err, &re), IsTLSError(err), errors.Is(err, context.Canceled):
		return false
	case errors.As(err, &ce):
		return true
	case errors.As(err, &dns):
		return dns.IsTimeout || dns.IsTemporary
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return true
	}
	for _, e := range []error{syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// IsTLSError reports whether err is a TLS failure: a certificate that did
// not verify (expired, not yet valid, unknown authority, wrong name), an
// alert from the peer, or a peer that does not speak TLS.
func IsTLSError(err error) bool {
	var cve *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	var he x509.HostnameError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	return errors.As(err, &cve) || errors.As(err, &ua) || errors.As(err, &ci) ||
		errors.As(err, &he) || errors.As(err, &rh) || errors.As(err, &ae)
}
