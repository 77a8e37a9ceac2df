package transport

import "time"

// Policy is the network discipline. DefaultPolicy holds the defaults, which
// the README documents.
type Policy struct {
	// Timeout bounds one attempt, headers and body.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one request, the first included.
	MaxAttempts int
	// BaseDelay and MaxDelay shape the backoff: attempt n waits a random
	// duration in [0, min(MaxDelay, BaseDelay*2^n)) (full jitter).
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter caps how long a Retry-After header can make us wait.
	MaxRetryAfter time.Duration
	// RetryRatio and RetryFloor make the retry budget: retries may not
	// exceed RetryRatio of the requests sent, plus RetryFloor.
	RetryRatio float64
	RetryFloor int
	// MaxConnsPerHost caps concurrent connections to one host.
	MaxConnsPerHost int
	// Rate, if positive, caps requests per second across the client; Burst
	// is the bucket size.
	Rate  float64
	Burst int
	// MaxRedirects caps a redirect chain.
	MaxRedirects int
	// CDNLoopToken identifies lockstep in CDN-Loop headers.
	CDNLoopToken string
	// UserAgent is sent with every request.
	UserAgent string
}

// DefaultPolicy returns the defaults: 10 s a request, 4 attempts, backoff
// from 100 ms capped at 5 s, Retry-After capped at 30 s, a retry budget of
// 10% of requests plus 10, 16 connections a host, no global rate limit, 3
// redirects.
func DefaultPolicy() Policy {
	return Policy{
		Timeout:         10 * time.Second,
		MaxAttempts:     4,
		BaseDelay:       100 * time.Millisecond,
		MaxDelay:        5 * time.Second,
		MaxRetryAfter:   30 * time.Second,
		RetryRatio:      0.1,
		RetryFloor:      10,
		MaxConnsPerHost: 16,
		MaxRedirects:    3,
		CDNLoopToken:    "lockstep",
		UserAgent:       "lockstep",
	}
}
