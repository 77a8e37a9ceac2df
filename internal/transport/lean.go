package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// WithLeanHeads sends a HEAD over plain HTTP/1.1 (an http:// URL reached
// without a proxy) on connections of the client's own, one request in
// flight on each: the request written and flushed, its response parsed
// (http.ReadResponse) on the caller's goroutine, the connection kept for
// the next only when the response left nothing unread behind it and
// nothing arrived on it while it was idle (checked before it is used
// again: a response nobody asked for never answers a request). That is
// net/http's own exchange without its Transport's reader and writer
// goroutines and their hand-offs, which cost a CDN check of many HEADs
// most of its CPU. Every other request, and a HEAD answered with an
// informational (1xx) or non-HTTP/1 status line, goes through net/http.
// Everything above the connection is the same for both: the retry policy,
// the retry budget, the breakers, the per-host cap, the rate limit,
// CDN-Loop, redirects (http.Client follows them) and the dialer (with
// WithDeniedAddresses' and WithDialContext's rules). Requests are never
// pipelined: a response is bound to its request by being the only one asked
// for on its connection.
func WithLeanHeads() Option {
	return func(c *Client) { c.lean = &leanPool{idle: map[string][]*leanConn{}} }
}

// leanMaxHeaderBytes bounds a response's status line and headers, as
// net/http's default MaxResponseHeaderBytes does.
const leanMaxHeaderBytes = 10 << 20

// leanPool keeps the idle connections of WithLeanHeads, by host:port.
type leanPool struct {
	mu   sync.Mutex
	idle map[string][]*leanConn
}

// leanConn is one connection, read through a limit that each response's
// read resets.
type leanConn struct {
	conn    net.Conn
	lr      limitedReader
	br      *bufio.Reader
	bw      *bufio.Writer
	idleAt  time.Time
	reused  bool
	expired bool
}

// limitedReader reads from r at most n bytes until reset, counting them.
type limitedReader struct {
	r    io.Reader
	n    int64
	read int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	l.read += int64(n)
	return n, err
}

var errHeaderTooLarge = errors.New("server response headers exceeded the limit")

// aLongTimeAgo is a deadline in the past, to interrupt a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

// leanable reports whether req goes by WithLeanHeads' path.
func (c *Client) leanable(req *http.Request) bool {
	if c.lean == nil || !leanSupported || req.Method != http.MethodHead || req.URL.Scheme != "http" ||
		(req.Body != nil && req.Body != http.NoBody) || req.Header.Get("Upgrade") != "" {
		return false
	}
	if c.base.Proxy != nil {
		if u, err := c.base.Proxy(req); err != nil || u != nil {
			return false
		}
	}
	return true
}

// leanRoundTrip sends req (leanable) on an idle connection of its host or
// a new one. A reused connection that fails before a byte of the response
// came (the server closed it while idle) is replaced once by a new one, as
// net/http does for a request that may be sent again. A response that is
// not for this path (1xx, not HTTP/1) is asked again through net/http.
func (c *Client) leanRoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	addr := canonicalAddr(req)
	for try := 0; ; try++ {
		lc, err := c.lean.get(ctx, c, addr)
		if err != nil {
			return nil, err
		}
		resp, err := lc.roundTrip(ctx, req, c.policy.Timeout)
		if err != nil {
			lc.conn.Close()
			if lc.reused && lc.lr.read == 0 && try == 0 && ctx.Err() == nil {
				continue
			}
			return nil, err
		}
		if resp.StatusCode < 200 || resp.ProtoMajor != 1 {
			lc.conn.Close()
			return c.base.RoundTrip(req)
		}
		if resp.Close || lc.br.Buffered() > 0 || lc.expired {
			// Connection: close, an HTTP/1.0 server, or bytes after a
			// response that has no body: never reused.
			lc.conn.Close()
		} else {
			c.lean.put(addr, lc, c.policy.MaxConnsPerHost)
		}
		return resp, nil
	}
}

// roundTrip writes req and reads its response, bounded by ctx and by
// timeout for the response's headers.
func (lc *leanConn) roundTrip(ctx context.Context, req *http.Request, timeout time.Duration) (*http.Response, error) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := lc.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { lc.conn.SetDeadline(aLongTimeAgo) })
	defer func() {
		if !stop() {
			lc.expired = true // the deadline was moved: not reusable
		}
	}()
	lc.lr.n, lc.lr.read = leanMaxHeaderBytes, 0
	if err := req.Write(lc.bw); err != nil {
		return nil, err
	}
	if err := lc.bw.Flush(); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(lc.br, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return resp, nil
}

// get returns an idle connection to addr or dials one.
func (p *leanPool) get(ctx context.Context, c *Client, addr string) (*leanConn, error) {
	p.mu.Lock()
	for list := p.idle[addr]; len(list) > 0; list = p.idle[addr] {
		lc := list[len(list)-1]
		p.idle[addr] = list[:len(list)-1]
		if time.Since(lc.idleAt) < c.base.IdleConnTimeout && idleClean(lc.conn) {
			p.mu.Unlock()
			lc.reused = true
			if t := httptrace.ContextClientTrace(ctx); t != nil && t.GotConn != nil {
				t.GotConn(httptrace.GotConnInfo{Conn: lc.conn, Reused: true})
			}
			return lc, nil
		}
		lc.conn.Close()
	}
	p.mu.Unlock()
	dial := c.base.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t := httptrace.ContextClientTrace(ctx)
	conn, err := dial(ctx, "tcp", addr)
	if t != nil && t.ConnectDone != nil {
		t.ConnectDone("tcp", addr, err)
	}
	if err != nil {
		return nil, err
	}
	if t != nil && t.GotConn != nil {
		t.GotConn(httptrace.GotConnInfo{Conn: conn})
	}
	lc := &leanConn{conn: conn, lr: limitedReader{r: conn}, bw: bufio.NewWriterSize(conn, 4<<10)}
	lc.br = bufio.NewReaderSize(&lc.lr, 4<<10)
	return lc, nil
}

// put keeps lc for the next request to addr, at most max idle per host.
func (p *leanPool) put(addr string, lc *leanConn, max int) {
	lc.idleAt, lc.reused = time.Now(), false
	p.mu.Lock()
	if len(p.idle[addr]) < max {
		p.idle[addr] = append(p.idle[addr], lc)
		lc = nil
	}
	p.mu.Unlock()
	if lc != nil {
		lc.conn.Close()
	}
}

// closeIdle closes every idle connection.
func (p *leanPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = map[string][]*leanConn{}
	p.mu.Unlock()
	for _, list := range idle {
		for _, lc := range list {
			lc.conn.Close()
		}
	}
}

// canonicalAddr is req's host:port, port 80 when the URL names none.
func canonicalAddr(req *http.Request) string {
	if port := req.URL.Port(); port != "" {
		return net.JoinHostPort(req.URL.Hostname(), port)
	}
	return net.JoinHostPort(req.URL.Hostname(), "80")
}
