package transport

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"strings"
	"sync"
)

// hostSlots bounds the requests in flight to each host. A host's entry
// lives while a request holds or waits for one of its slots, so that a
// client that asks 100,000 hosts once each (a fleet check) holds no state
// for the hosts it is done with.
type hostSlots struct {
	max   int
	mu    sync.Mutex
	slots map[string]*hostSlot
}

type hostSlot struct {
	ch    chan struct{}
	users int // requests holding or waiting for a slot
}

// acquire waits for a slot of host, or for ctx.
func (h *hostSlots) acquire(ctx context.Context, host string) (release func(), err error) {
	h.mu.Lock()
	s, ok := h.slots[host]
	if !ok {
		s = &hostSlot{ch: make(chan struct{}, h.max)}
		h.slots[host] = s
	}
	s.users++
	h.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
		return func() {
			<-s.ch
			h.leave(host, s)
		}, nil
	case <-ctx.Done():
		h.leave(host, s)
		return nil, ctx.Err()
	}
}

// leave drops a request from s, and s from the map when it was the last.
func (h *hostSlots) leave(host string, s *hostSlot) {
	h.mu.Lock()
	if s.users--; s.users == 0 {
		delete(h.slots, host)
	}
	h.mu.Unlock()
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
