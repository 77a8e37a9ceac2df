package transport

import (
	"math"
	"math/rand/v2"
	"net/http"
	"time"
)

// Policy is the network discipline. DefaultPolicy holds the defaults, which
// docs/network.md documents in a table; a zero field of a Policy given to New
// takes its default.
type Policy struct {
	// Timeout bounds one attempt: connecting, the TLS handshake, the
	// response headers and, for a Client's HTTPClient, the body.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one request, the first included.
	MaxAttempts int
	// BaseDelay and MaxDelay shape the backoff: before retry n (n = 0 for
	// the first retry) the client waits a random duration in
	// (0, min(MaxDelay, BaseDelay*2^n)] (capped exponential, full jitter).
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter caps how long a Retry-After header can make the client
	// wait. A response asking for longer ends the retries: the client never
	// retries earlier than a server asked.
	MaxRetryAfter time.Duration
	// RetryRatio and RetryFloor make the retry budget, a token bucket
	// shared by every request of the client (gRPC's retry throttle): it
	// holds RetryFloor tokens and starts full; every retryable failure
	// (a timeout, a reset, a 503…) costs one; every answer that needs no
	// retry earns RetryRatio; a retry is allowed only while the bucket is
	// more than half full. So retries never exceed RetryRatio of the
	// requests plus RetryFloor/2, and a client facing a dead server makes
	// about RetryFloor/2 retries in all and then fails fast, however long
	// it has lived, until good answers refill the bucket.
	RetryRatio float64
	RetryFloor int
	// BreakerFailures and BreakerCooldown shape the circuit breaker of
	// each host (breaker.go), for HTTPClient's requests: BreakerFailures
	// retryable failures in a row open it; while open, requests to the
	// host fail at once (a *CircuitOpenError, nothing sent) for a
	// cool-down drawn from [c/2, c], c starting at BreakerCooldown and
	// doubling, up to MaxDelay, for every probe that fails; then one
	// request probes the host. A negative BreakerFailures turns the
	// breakers off.
	BreakerFailures int
	BreakerCooldown time.Duration
	// MaxConnsPerHost caps the requests in flight to one host (and so its
	// connections): a request holds its slot until its body is closed or
	// read to the end.
	MaxConnsPerHost int
	// Rate, if positive, caps attempts per second across the client; Burst
	// is the bucket size (at least 1). Zero means no global rate limit.
	Rate  float64
	Burst int
	// MaxRedirects caps a redirect chain: the request after the
	// MaxRedirects-th redirect is a *LoopError.
	MaxRedirects int
	// CDNLoopToken is lockstep's own CDN-Loop (RFC 8586) token, for
	// lockstep's servers to append when they forward a request; the client
	// does not send it. (Whatever it is, a response whose CDN-Loop header
	// names any token twice is a *LoopError.)
	CDNLoopToken string
	// UserAgent is sent with every request that sets none.
	UserAgent string
}

// DefaultPolicy returns the defaults: 10 s an attempt, 4 attempts, backoff
// from 100 ms capped at 5 s, Retry-After capped at 30 s, a retry budget of
// 10 tokens earning 0.1 per good answer (retries at most 10% of requests
// plus 5), a host's breaker open after 3 failures in a row for 0.5–1 s
// (then 1–2 s, up to 5 s), 16 requests in flight a host, no global rate
// limit, 3 redirects.
func DefaultPolicy() Policy {
	return Policy{
		Timeout:         10 * time.Second,
		MaxAttempts:     4,
		BaseDelay:       100 * time.Millisecond,
		MaxDelay:        5 * time.Second,
		MaxRetryAfter:   30 * time.Second,
		RetryRatio:      0.1,
		RetryFloor:      10,
		BreakerFailures: 3,
		BreakerCooldown: time.Second,
		MaxConnsPerHost: 16,
		MaxRedirects:    3,
		CDNLoopToken:    "lockstep",
		UserAgent:       "lockstep",
	}
}

// WithDefaults returns p with every zero field set from DefaultPolicy.
func (p Policy) WithDefaults() Policy {
	d := DefaultPolicy()
	setDefault(&p.Timeout, d.Timeout)
	setDefault(&p.MaxAttempts, d.MaxAttempts)
	setDefault(&p.BaseDelay, d.BaseDelay)
	setDefault(&p.MaxDelay, d.MaxDelay)
	setDefault(&p.MaxRetryAfter, d.MaxRetryAfter)
	setDefault(&p.RetryRatio, d.RetryRatio)
	setDefault(&p.RetryFloor, d.RetryFloor)
	if p.BreakerFailures == 0 {
		p.BreakerFailures = d.BreakerFailures
	}
	setDefault(&p.BreakerCooldown, d.BreakerCooldown)
	setDefault(&p.MaxConnsPerHost, d.MaxConnsPerHost)
	setDefault(&p.MaxRedirects, d.MaxRedirects)
	if p.CDNLoopToken == "" {
		p.CDNLoopToken = d.CDNLoopToken
	}
	if p.UserAgent == "" {
		p.UserAgent = d.UserAgent
	}
	if p.Rate > 0 && p.Burst < 1 {
		p.Burst = 1
	}
	return p
}

func setDefault[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Ceiling returns the upper bound of the wait before retry n (n = 0 for
// the first retry): min(MaxDelay, BaseDelay*2^n).
func (p Policy) Ceiling(n int) time.Duration {
	p = p.WithDefaults()
	if n < 0 {
		n = 0
	}
	ceil := p.BaseDelay << min(n, 32)
	if ceil <= 0 || ceil > p.MaxDelay || ceil>>min(n, 32) != p.BaseDelay {
		ceil = p.MaxDelay
	}
	return ceil
}

// Delay returns a random wait before retry n: full jitter, uniform in
// (0, Ceiling(n)].
func (p Policy) Delay(n int) time.Duration {
	return time.Duration(rand.Int64N(int64(p.Ceiling(n)))) + 1
}

// Backoff is the shape of a policy's backoff for retryers that take
// k8s-style parameters (go-containerregistry's remote.Backoff): wait n is
// Duration*Factor^n plus a random share of up to Jitter of it, for Steps
// attempts. In that shape a Cap ends the retries once reached, so it is
// left zero.
type Backoff struct {
	Duration time.Duration
	Factor   float64
	Jitter   float64
	Steps    int
	Cap      time.Duration
}

// Backoff returns the policy's backoff in the k8s shape: MaxAttempts
// steps, the first wait BaseDelay, then doubling, with up to as much again
// of jitter, and no wait above MaxDelay (the factor is lowered where
// doubling would pass it). The shape cannot express full jitter (it jitters
// upwards); this is the closest one.
func (p Policy) Backoff() Backoff {
	p = p.WithDefaults()
	const jitter = 1.0
	top := float64(p.MaxDelay) / (1 + jitter) // the largest wait before jitter
	first := math.Min(float64(p.BaseDelay), top)
	factor := 2.0
	if waits := p.MaxAttempts - 1; waits > 1 && first*math.Pow(factor, float64(waits-1)) > top {
		factor = math.Max(1, math.Pow(top/first, 1/float64(waits-1)))
	}
	return Backoff{Duration: time.Duration(first), Factor: factor, Jitter: jitter, Steps: p.MaxAttempts}
}

// retryableStatus lists the only statuses worth a retry.
var retryableStatus = []int{
	http.StatusTooManyRequests,
	http.StatusBadGateway,
	http.StatusServiceUnavailable,
	http.StatusGatewayTimeout,
}

// RetryableStatuses returns the statuses the policy retries: 429, 502, 503
// and 504. Never 403 or 404: they do not get better by asking again.
func RetryableStatuses() []int { return append([]int(nil), retryableStatus...) }

// RetryableStatus reports whether a response with this status is retried.
func RetryableStatus(code int) bool {
	for _, c := range retryableStatus {
		if c == code {
			return true
		}
	}
	return false
}
