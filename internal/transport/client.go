package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Client sends HTTP requests under a Policy. It is safe for concurrent use.
type Client struct {
	policy  Policy
	base    *http.Transport
	limiter *rate.Limiter
	http    *http.Client

	requests atomic.Int64
	retries  atomic.Int64

	mu    sync.Mutex
	certs map[string]Certificate
}

// Stats counts what a Client sent.
type Stats struct {
	// Requests counts attempts sent, retries included.
	Requests int64 `json:"requests"`
	// Retries counts attempts after the first.
	Retries int64 `json:"retries"`
}

// Certificate is the leaf certificate an endpoint presented.
type Certificate struct {
	Host     string    `json:"host"`
	Subject  string    `json:"subject"`
	NotAfter time.Time `json:"notAfter"`
}

// Option configures a Client.
type Option func(*Client)

// WithTLSConfig sets the TLS configuration (roots, client certificates).
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *Client) { c.base.TLSClientConfig = cfg }
}

// New returns a Client for p. Zero fields of p take DefaultPolicy's values.
func New(p Policy, opts ...Option) *Client {
	p = p.withDefaults()
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: p.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   p.MaxConnsPerHost,
		MaxConnsPerHost:       p.MaxConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   p.Timeout,
		ResponseHeaderTimeout: p.Timeout,
	}
	c := &Client{policy: p, base: base, certs: map[string]Certificate{}}
	if p.Rate > 0 {
		burst := p.Burst
		if burst < 1 {
			burst = 1
		}
		c.limiter = rate.NewLimiter(rate.Limit(p.Rate), burst)
	}
	for _, o := range opts {
		o(c)
	}
	c.http = &http.Client{Transport: c.Transport(), CheckRedirect: c.checkRedirect}
	return c
}

func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.Timeout <= 0 {
		p.Timeout = d.Timeout
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = d.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = d.MaxDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	if p.RetryRatio <= 0 {
		p.RetryRatio = d.RetryRatio
	}
	if p.RetryFloor <= 0 {
		p.RetryFloor = d.RetryFloor
	}
	if p.MaxConnsPerHost <= 0 {
		p.MaxConnsPerHost = d.MaxConnsPerHost
	}
	if p.MaxRedirects <= 0 {
		p.MaxRedirects = d.MaxRedirects
	}
	if p.CDNLoopToken == "" {
		p.CDNLoopToken = d.CDNLoopToken
	}
	if p.UserAgent == "" {
		p.UserAgent = d.UserAgent
	}
	return p
}

// Policy returns the client's policy, defaults filled in.
func (c *Client) Policy() Policy { return c.policy }

// Stats returns what the client has sent so far.
func (c *Client) Stats() Stats {
	return Stats{Requests: c.requests.Load(), Retries: c.retries.Load()}
}

// Certificates returns the leaf certificate of every TLS endpoint touched.
func (c *Client) Certificates() []Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Certificate, 0, len(c.certs))
	for _, v := range c.certs {
		out = append(out, v)
	}
	return out
}

// Transport returns a RoundTripper that applies the policy's timeouts,
// connection caps, rate limit and TLS recording, but does not retry: for
// libraries that keep their own retryer (go-containerregistry, the AWS SDK).
func (c *Client) Transport() http.RoundTripper { return roundTripper{c} }

// HTTPClient returns an *http.Client whose Do retries under the policy.
func (c *Client) HTTPClient() *http.Client {
	return &http.Client{Transport: retrying{c}, CheckRedirect: c.checkRedirect}
}

type roundTripper struct{ c *Client }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	c := rt.c
	if c.limiter != nil {
		if err := c.limiter.Wait(req.Context()); err != nil {
			return nil, err
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", c.policy.UserAgent)
	}
	c.requests.Add(1)
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		leaf := resp.TLS.PeerCertificates[0]
		c.mu.Lock()
		c.certs[req.URL.Host] = Certificate{Host: req.URL.Host, Subject: leaf.Subject.String(), NotAfter: leaf.NotAfter}
		c.mu.Unlock()
	}
	if err := c.checkLoop(req, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// LoopError reports a request loop: a redirect chain that revisits a URL or
// is too long, or a CDN-Loop header that names one CDN twice.
type LoopError struct {
	URL    string
	Reason string
}

func (e *LoopError) Error() string { return fmt.Sprintf("loop at %s: %s", e.URL, e.Reason) }

func (c *Client) checkLoop(req *http.Request, resp *http.Response) error {
	seen := map[string]bool{}
	for _, v := range resp.Header.Values("CDN-Loop") {
		for _, part := range strings.Split(v, ",") {
			tok := strings.TrimSpace(part)
			if i := strings.IndexByte(tok, ';'); i >= 0 {
				tok = strings.TrimSpace(tok[:i])
			}
			if tok == "" {
				continue
			}
			tok = strings.ToLower(tok)
			if seen[tok] {
				return &LoopError{URL: req.URL.String(), Reason: "CDN-Loop names " + tok + " more than once"}
			}
			seen[tok] = true
		}
	}
	return nil
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.policy.MaxRedirects {
		return &LoopError{URL: req.URL.String(), Reason: fmt.Sprintf("more than %d redirects", c.policy.MaxRedirects)}
	}
	for _, v := range via {
		if v.URL.String() == req.URL.String() {
			return &LoopError{URL: req.URL.String(), Reason: "redirect chain revisits the URL"}
		}
	}
	return nil
}

type retrying struct{ c *Client }

// RoundTrip sends req, retrying under the policy. Requests with a body are
// retried only when GetBody is set.
func (r retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	c := r.c
	var lastErr error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if req.Body != nil && req.GetBody == nil {
				return nil, lastErr
			}
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				req = req.Clone(req.Context())
				req.Body = body
			}
		}
		ctx, cancel := context.WithTimeout(req.Context(), c.policy.Timeout)
		resp, err := roundTripper{c}.RoundTrip(req.WithContext(ctx))
		retry, wait := c.shouldRetry(req.Context(), resp, err)
		if !retry || attempt+1 >= c.policy.MaxAttempts || !c.takeRetry() {
			if err != nil {
				cancel()
				return nil, err
			}
			resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		}
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			lastErr = fmt.Errorf("%s %s: %s", req.Method, req.URL, resp.Status)
		} else {
			lastErr = err
		}
		cancel()
		if wait <= 0 {
			wait = c.backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		case <-t.C:
		}
	}
}

// takeRetry spends one retry from the budget, if any is left.
func (c *Client) takeRetry() bool {
	for {
		r := c.retries.Load()
		allowed := int64(float64(c.requests.Load())*c.policy.RetryRatio) + int64(c.policy.RetryFloor)
		if r >= allowed {
			return false
		}
		if c.retries.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// backoff is full jitter: a random wait in [0, min(MaxDelay, Base*2^attempt)).
func (c *Client) backoff(attempt int) time.Duration {
	ceil := c.policy.BaseDelay << min(attempt, 30)
	if ceil <= 0 || ceil > c.policy.MaxDelay {
		ceil = c.policy.MaxDelay
	}
	return time.Duration(rand.Int64N(int64(ceil)) + 1)
}

func (c *Client) shouldRetry(ctx context.Context, resp *http.Response, err error) (bool, time.Duration) {
	if ctx.Err() != nil {
		return false, 0
	}
	if err != nil {
		var le *LoopError
		if errors.As(err, &le) {
			return false, 0
		}
		return true, 0
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, c.retryAfter(resp)
	}
	return false, 0
}

// retryAfter reads Retry-After (seconds or an HTTP date), capped.
func (c *Client) retryAfter(resp *http.Response) time.Duration {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	if d < 0 {
		d = 0
	}
	return min(d, c.policy.MaxRetryAfter)
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
