package transport

import (
	"context"
	"net"
)

// WithDialContext replaces how connections are opened, e.g. to reach the
// Docker Engine API over a unix socket. Everything else in the policy
// (timeouts, retries, the retry budget) applies unchanged.
func WithDialContext(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(c *Client) {
		c.base.DialContext = dial
		c.base.Proxy = nil
	}
}
