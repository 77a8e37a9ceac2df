package transport

import (
	"context"
	"errors"
	"time"
)

// Until calls fn until it succeeds, fails for good, or ctx ends, waiting
// out every error for which notYet reports true with the policy's backoff
// (before call n+1 it waits Delay(n): capped exponential, full jitter), so
// that a thousand gates waiting for their apps do not poll in step. It
// returns the number of calls made and fn's last error: nil, an error
// notYet refused (final), or, when ctx ended first, the last not-yet
// error (ctx's own error if fn never returned one). An error that is, or
// wraps, a *CircuitOpenError is waited out until its Until instead, and
// takes no step of the backoff.
//
// Until is for waiting on something that is expected to come up (an app
// starting, a container being created), bounded by ctx's deadline; a
// request's own retries stay with Client.
func Until(ctx context.Context, p Policy, notYet func(error) bool, fn func(context.Context) error) (calls int, err error) {
	p = p.WithDefaults()
	for n := 0; ; n++ {
		calls++
		err = fn(ctx)
		if err == nil || !notYet(err) {
			return calls, err
		}
		if ctx.Err() != nil {
			return calls, err
		}
		wait := p.Delay(n)
		var open *CircuitOpenError
		if errors.As(err, &open) {
			// The host's breaker says when it will be asked again: wait
			// until then (the jitter of its cool-down spreads the callers),
			// without spending a step of the backoff on a call that sent
			// nothing.
			wait = max(time.Until(open.Until), time.Millisecond)
			n--
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return calls, err
		case <-t.C:
		}
	}
}
