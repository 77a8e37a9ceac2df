package cdn

import (
	"context"
	"crypto/tls"
	"net/http/httptrace"
	"sync"
)

// firstConn holds back the requests to a CDN base until the first one has
// its connection: over TLS, ALPN then says whether the host speaks HTTP/2,
// and if it does the rest multiplex on that connection. A burst sent
// before would find no connection and dial one per request in flight
// (up to the per-host cap), handshake each and keep one. It opens at the
// first request's connection, at a failure to connect or handshake, or at
// the end of its check, whichever comes first.
type firstConn struct {
	once   sync.Once
	opened chan struct{}
}

func newFirstConn() *firstConn { return &firstConn{opened: make(chan struct{})} }

func (f *firstConn) open() { f.once.Do(func() { close(f.opened) }) }

// wait returns once f is open or ctx is done.
func (f *firstConn) wait(ctx context.Context) {
	select {
	case <-f.opened:
	case <-ctx.Done():
	}
}

// trace returns ctx with a trace that opens f.
func (f *firstConn) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { f.open() },
		ConnectDone: func(_, _ string, err error) {
			if err != nil {
				f.open()
			}
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err != nil {
				f.open()
			}
		},
	})
}
