package transport

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Client sends HTTP requests under a Policy. It is safe for concurrent use;
// one Client per process (or per simulated instance) shares its retry
// budget, per-host slots, rate limit and connections among all its callers.
type Client struct {
	policy   Policy
	base     *http.Transport
	limiter  *rate.Limiter
	hosts    hostSlots
	budget   budget
	breakers *breakers
	clock    Clock // WithClock; the system's by default
	logger   *slog.Logger
	lean     *leanPool // WithLeanHeads

	requests    atomic.Int64
	retries     atomic.Int64
	denied      atomic.Int64
	circuitOpen atomic.Int64

	// Guards (guard.go).
	denyPrefixes []netip.Prefix
	sameOrigin   bool

	mu    sync.Mutex
	certs map[string]Certificate

	// Roots loaded on the first request that may use TLS (WithRootCAs).
	loadRoots   func() *x509.CertPool
	rootsOnce   sync.Once
	rootsLoaded atomic.Bool
}

// Stats counts what a Client sent.
type Stats struct {
	// Requests counts attempts sent, retries included.
	Requests int64 `json:"requests"`
	// Retries counts attempts after the first.
	Retries int64 `json:"retries"`
	// RetriesDenied counts retries the budget refused.
	RetriesDenied int64 `json:"retriesDenied"`
	// CircuitOpen counts requests not sent because their host's breaker
	// was open (a *CircuitOpenError).
	CircuitOpen int64 `json:"circuitOpen"`
}

// Certificate is the leaf certificate an endpoint presented.
type Certificate struct {
	// Host is the endpoint, host:port as in the URL.
	Host      string    `json:"host"`
	Subject   string    `json:"subject"`
	Issuer    string    `json:"issuer,omitempty"`
	DNSNames  []string  `json:"dnsNames,omitempty"`
	NotBefore time.Time `json:"notBefore"`
	NotAfter  time.Time `json:"notAfter"`
	// Error is set when the certificate did not verify (expired, unknown
	// authority, wrong name): the handshake failed and nothing was sent.
	Error string `json:"error,omitempty"`
}

// Option configures a Client.
type Option func(*Client)

// WithTLSConfig sets the TLS configuration (roots, client certificates).
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *Client) { c.base.TLSClientConfig = cfg }
}

// WithoutHeaderIndexing stops HTTP/2 header compression from indexing
// the requests' headers, for a client whose every request has a path of
// its own (a CDN check): there each path would enter the table only to
// push out an older one, a cost on every request and never a saving. The
// headers are sent as literals (a few dozen bytes more a request); HTTP/1
// is unaffected.
func WithoutHeaderIndexing() Option {
	return func(c *Client) {
		// 1 byte: no header fits, so none is added to the table.
		c.base.HTTP2 = &http.HTTP2Config{MaxEncoderHeaderTableSize: 1}
	}
}

// WithLogger sets the logger retries are reported to (at debug level); the
// default is silent.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithRootCAs makes the client trust the roots load returns instead of the
// system's, loaded on the first request that may use TLS (an https URL, or
// any request sent through a proxy), not before: a process whose requests
// are all plain http never parses a certificate. load is called at most
// once per Client, before any TLS handshake; it replaces the RootCAs of
// WithTLSConfig's configuration, which is copied, not modified. A client
// whose TLS configuration leaves the roots to the system loads SystemRoots
// the same way.
func WithRootCAs(load func() *x509.CertPool) Option {
	return func(c *Client) { c.loadRoots = load }
}

// New returns a Client for p. Zero fields of p take DefaultPolicy's values.
func New(p Policy, opts ...Option) *Client {
	p = p.WithDefaults()
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
		ExpectContinueTimeout: time.Second,
	}
	c := &Client{
		policy:   p,
		base:     base,
		hosts:    hostSlots{max: p.MaxConnsPerHost, slots: map[string]*hostSlot{}},
		budget:   budget{tokens: float64(p.RetryFloor), capacity: float64(p.RetryFloor), ratio: p.RetryRatio},
		breakers: newBreakers(p),
		clock:    systemClock{},
		logger:   slog.New(slog.DiscardHandler),
		certs:    map[string]Certificate{},
	}
	if p.Rate > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(p.Rate), p.Burst)
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.loadRoots == nil && readsRootFiles && leftToSystem(base.TLSClientConfig) {
		// The system's roots, read once per process on the first request
		// that may use TLS (SystemRoots): the same as Go's, for less.
		c.loadRoots = systemRoots
	}
	if c.loadRoots != nil {
		// A copy of its own, whose RootCAs useRoots sets once.
		if base.TLSClientConfig != nil {
			base.TLSClientConfig = base.TLSClientConfig.Clone()
		} else {
			base.TLSClientConfig = &tls.Config{}
		}
	}
	return c
}

// leftToSystem reports whether cfg leaves the roots to Go's system pool.
func leftToSystem(cfg *tls.Config) bool {
	return cfg == nil || (cfg.RootCAs == nil && !cfg.InsecureSkipVerify)
}

// useRoots loads WithRootCAs's roots before the first request that may use
// TLS. The configuration is still unused then: net/http reads RootCAs only
// when it dials TLS, for a request sent after this.
func (c *Client) useRoots(req *http.Request) {
	if c.loadRoots == nil || c.rootsLoaded.Load() {
		return
	}
	if req.URL.Scheme == "http" && c.base.Proxy == nil {
		return
	}
	if req.URL.Scheme == "http" {
		if u, err := c.base.Proxy(req); err == nil && u == nil {
			return
		}
	}
	c.rootsOnce.Do(func() {
		c.base.TLSClientConfig.RootCAs = c.loadRoots()
		c.rootsLoaded.Store(true)
	})
}

// Policy returns the client's policy, defaults filled in.
func (c *Client) Policy() Policy { return c.policy }

// Stats returns what the client has sent so far.
func (c *Client) Stats() Stats {
	return Stats{Requests: c.requests.Load(), Retries: c.retries.Load(), RetriesDenied: c.denied.Load(), CircuitOpen: c.circuitOpen.Load()}
}

// Certificates returns the leaf certificate of every TLS endpoint touched,
// including those that failed to verify, sorted by host.
func (c *Client) Certificates() []Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Certificate, 0, len(c.certs))
	for _, v := range c.certs {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

func (c *Client) recordCert(host string, cert Certificate) {
	cert.Host = host
	c.mu.Lock()
	c.certs[host] = cert
	c.mu.Unlock()
}

// CloseIdleConnections closes the client's idle connections.
func (c *Client) CloseIdleConnections() {
	c.base.CloseIdleConnections()
	if c.lean != nil {
		c.lean.closeIdle()
	}
}

// Transport returns a RoundTripper that applies the policy's per-host cap,
// rate limit, connection and header timeouts, loop detection and TLS
// recording, but does not retry: for libraries that keep their own retryer
// (go-containerregistry, the AWS SDK), configured from the same Policy
// (see the awsretry and ggcrretry packages). Its requests count in Stats.
func (c *Client) Transport() http.RoundTripper { return roundTripper{c} }

// HTTPClient returns an *http.Client whose requests retry under the
// policy, bounded by a per-attempt timeout, with redirects capped and loops
// refused (a *LoopError). Close every response body: a request holds its
// host slot until then.
func (c *Client) HTTPClient() *http.Client {
	return &http.Client{Transport: retrying{c}, CheckRedirect: c.checkRedirect}
}
