// Package ggcrretry configures go-containerregistry's remote package to
// lockstep's network policy: its requests go through a transport.Client's
// Transport (per-host cap, rate limit, timeouts, TLS recording) and its own
// retryer takes the policy's attempts, backoff, statuses and retryable
// errors, under the client's retry budget. It is the one
// go-containerregistry adapter: verify/registry,
// verify/imagesig's callers and the CLI all take their options from it.
//
//	img, err := remote.Image(ref, ggcrretry.Options(client)...)
package ggcrretry

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	ggcrtransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// Options returns the remote options for c:
//   - WithTransport: c.Transport(), wrapped so that a request whose
//     context has ended is never retried;
//   - WithUserAgent: the policy's UserAgent;
//   - WithRetryBackoff: Backoff(c.Policy());
//   - WithRetryStatusCodes: transport.RetryableStatuses() (429, 502, 503,
//     504; never a 4xx or a 500);
//   - WithRetryPredicate: those statuses, and what transport.RetryableError
//     retries (timeouts, resets, refused or aborted connections, an EOF
//     before the response, temporary DNS failures); never a TLS failure, a
//     *transport.LoopError, or an attempt whose context was cancelled or
//     expired (go-containerregistry's retryer does not watch the context);
//     and a retry only while the client's retry budget allows it
//     (Client.SpendRetry; every answer that needs no retry earns it back,
//     Client.EarnRetry), so go-containerregistry's retries share the
//     budget of the client's own requests.
func Options(c *transport.Client) []remote.Option {
	pol := c.Policy()
	return []remote.Option{
		remote.WithTransport(budgeted{c}),
		remote.WithUserAgent(pol.UserAgent),
		remote.WithRetryBackoff(Backoff(pol)),
		remote.WithRetryStatusCodes(transport.RetryableStatuses()...),
		remote.WithRetryPredicate(func(err error) bool { return retryable(err) && c.SpendRetry() }),
	}
}

// Backoff is p.Backoff() as go-containerregistry's remote.Backoff:
// MaxAttempts attempts; the first wait BaseDelay, then doubling, with up to
// as much again of jitter, and no wait above MaxDelay. The shape jitters
// upwards rather than fully, and its Cap ends the retries once reached, so
// Cap is never set: the growth factor is lowered instead where doubling
// would pass MaxDelay.
func Backoff(p transport.Policy) remote.Backoff {
	b := p.Backoff()
	return remote.Backoff{Duration: b.Duration, Factor: b.Factor, Jitter: b.Jitter, Steps: b.Steps}
}

// retryable is the retry predicate of Options.
func retryable(err error) bool {
	var done *doneError
	var te *ggcrtransport.Error
	switch {
	case err == nil, errors.As(err, &done), errors.Is(err, context.Canceled):
		return false
	case errors.As(err, &te):
		// go-containerregistry's error for a status of
		// WithRetryStatusCodes (the only *transport.Error the retryer
		// sees) is temporary.
		return te.Temporary()
	}
	return transport.RetryableError(err)
}

// budgeted is the client's Transport as go-containerregistry's retryer
// sees it: an answer that needs no retry earns the budget back, and the
// failure of a request whose context has ended is marked, so that the
// predicate does not retry it (go-containerregistry's retryer would
// otherwise sleep and try again: transport.RetryableError counts an
// expired deadline as retryable, since a transport.Client checks the
// caller's context itself).
type budgeted struct{ c *transport.Client }

func (b budgeted) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.c.Transport().RoundTrip(r)
	switch {
	case err != nil && r.Context().Err() != nil:
		return nil, &doneError{err}
	case err == nil && !transport.RetryableStatus(resp.StatusCode):
		b.c.EarnRetry()
	}
	return resp, err
}

// doneError is the failure of a request whose context had ended.
type doneError struct{ err error }

func (e *doneError) Error() string { return e.err.Error() }
func (e *doneError) Unwrap() error { return e.err }
