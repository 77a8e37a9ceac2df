// Package ggcrretry configures go-containerregistry's remote package to
// lockstep's network policy: its requests go through a transport.Client's
// Transport (per-host cap, rate limit, timeouts, TLS recording) and its own
// retryer takes the policy's backoff, statuses and retryable errors.
//
//	img, err := remote.Image(ref, ggcrretry.Options(client)...)
package ggcrretry

import (
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// Options returns the remote options for c: WithTransport(c.Transport()),
// WithRetryBackoff (the policy's Backoff), WithRetryStatusCodes (429, 502,
// 503, 504) and WithRetryPredicate (transport.RetryableError).
func Options(c *transport.Client) []remote.Option {
	b := c.Policy().Backoff()
	return []remote.Option{
		remote.WithTransport(c.Transport()),
		remote.WithRetryBackoff(remote.Backoff{Duration: b.Duration, Factor: b.Factor, Jitter: b.Jitter, Steps: b.Steps}),
		remote.WithRetryStatusCodes(transport.RetryableStatuses()...),
		remote.WithRetryPredicate(transport.RetryableError),
	}
}
