package transport

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"strings"
	"sync"
)

// hostSlots bounds the requests in flight to each host.
type hostSlots struct {
	max   int
	mu    sync.Mutex
	slots map[string]chan struct{}
}

// acquire waits for a slot of host, or for ctx.
func (h *hostSlots) acquire(ctx context.Context, host string) (release func(), err error) {
	h.mu.Lock()
	ch, ok := h.slots[host]
	if !ok {
		ch = make(chan struct{}, h.max)
		h.slots[host] = ch
	}
	h.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hostKey is the request's host:port, the default port made explicit.
func hostKey(req *http.Request) string {
	host, port := req.URL.Hostname(), req.URL.Port()
	if port != "" && strings.ToLower(host) == host {
		return req.URL.Host // already host:port, as JoinHostPort would write it
	}
	if port == "" {
		port = "80"
		if strings.EqualFold(req.URL.Scheme, "https") {
			port = "443"
		}
	}
	return net.JoinHostPort(strings.ToLower(host), port)
}

func leafCert(c *x509.Certificate) Certificate {
	return Certificate{
		Subject:   c.Subject.String(),
		Issuer:    c.Issuer.String(),
		DNSNames:  c.DNSNames,
		NotBefore: c.NotBefore,
		NotAfter:  c.NotAfter,
	}
}
