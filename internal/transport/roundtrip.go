package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

type roundTripper struct{ c *Client }

// RoundTrip sends one attempt: it takes a slot of the host (waiting for
// one), waits for the rate limiter, sends, records the TLS certificate and
// refuses a CDN-Loop loop. The slot is released when the body is closed or
// read to its end, or at once on an error.
func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	c := rt.c
	if err := c.checkDenied(req); err != nil {
		return nil, err
	}
	waited := WaitsFrom(req.Context()).begin(hostKey(req), true)
	release, err := c.hosts.acquire(req.Context(), hostKey(req))
	if err != nil {
		waited()
		return nil, err
	}
	slot := release
	release = func() { slot(); waited() }
	if c.limiter != nil {
		if err := c.limiter.Wait(req.Context()); err != nil {
			release()
			return nil, err
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", c.policy.UserAgent)
	}
	c.useRoots(req)
	c.requests.Add(1)
	var resp *http.Response
	if c.leanable(req) {
		resp, err = c.leanRoundTrip(req)
	} else {
		resp, err = c.base.RoundTrip(req)
	}
	if err != nil {
		release()
		var cve *tls.CertificateVerificationError
		if errors.As(err, &cve) && len(cve.UnverifiedCertificates) > 0 {
			cert := leafCert(cve.UnverifiedCertificates[0])
			cert.Error = cve.Err.Error()
			c.recordCert(req.URL.Host, cert)
		}
		return nil, err
	}
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		c.recordCert(req.URL.Host, leafCert(resp.TLS.PeerCertificates[0]))
	}
	resp.Body = &body{ReadCloser: resp.Body, release: release, length: resp.ContentLength}
	if err := checkCDNLoop(req, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// drainLimit is how much of an unread body Close reads so that the
// connection can be reused; a body known to be longer closes the
// connection instead.
const drainLimit = 64 << 10

// body releases its host slot (and, for a retrying client, cancels the
// attempt's context) once: at EOF or Close. Close first drains up to
// drainLimit bytes, so that the connection goes back to the pool, unless
// the body is known to be longer or was abandoned.
type body struct {
	io.ReadCloser
	release func()
	cancel  context.CancelFunc
	length  int64
	once    sync.Once
	eof     bool
	abandon bool
}

// Abandon closes resp's body without draining it: for a caller that capped
// its read (at an asset's recorded size) and must not read a byte more.
// The connection is not reused.
func Abandon(resp *http.Response) error {
	if b, ok := resp.Body.(*body); ok {
		b.abandon = true
	}
	return resp.Body.Close()
}

// Read releases the slot at EOF, as the doc of RoundTrip says: a library
// that reads a body to its end and never closes it (the Docker client
// does so with every error answer, a 404 "no such container" among them)
// must not hold the host's slot for good, or the host's next request
// after MaxConnsPerHost of them waits for a slot until its deadline.
func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
		b.done()
	}
	return n, err
}

func (b *body) Close() error {
	if !b.eof && !b.abandon && b.length <= drainLimit {
		io.CopyN(io.Discard, b.ReadCloser, drainLimit)
	}
	err := b.ReadCloser.Close()
	b.done()
	return err
}

func (b *body) done() {
	b.once.Do(func() {
		if b.release != nil {
			b.release()
		}
		if b.cancel != nil {
			b.cancel()
		}
	})
}

// LoopError reports a request loop: a redirect chain that revisits a URL or
// is too long, or a CDN-Loop header that names one CDN twice. It is never
// retried.
type LoopError struct {
	URL    string
	Reason string
}

func (e *LoopError) Error() string { return fmt.Sprintf("loop at %s: %s", e.URL, e.Reason) }

// checkCDNLoop refuses a response whose CDN-Loop header (RFC 8586: a list
// of cdn-id [; parameters], over one or more header lines) names one CDN
// more than once.
func checkCDNLoop(req *http.Request, resp *http.Response) error {
	values := resp.Header.Values("CDN-Loop")
	if len(values) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for _, v := range values {
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

// checkRedirect refuses a redirect chain that revisits a URL or passes
// MaxRedirects hops, and (WithSameOriginRedirects) one to another origin.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.sameOrigin {
		if err := CheckSameOrigin(req, via); err != nil {
			return err
		}
	}
	for _, v := range via {
		if v.URL.String() == req.URL.String() {
			return &LoopError{URL: req.URL.String(), Reason: "redirect chain revisits the URL"}
		}
	}
	if len(via) > c.policy.MaxRedirects {
		return &LoopError{URL: req.URL.String(), Reason: fmt.Sprintf("more than %d redirects", c.policy.MaxRedirects)}
	}
	return nil
}
