package transport

import (
	"context"
	"time"
)

// Until calls fn until it succeeds, fails for good, or ctx ends, waiting
// out every error for which notYet reports true with the policy's backoff
// (before call n+1 it waits Delay(n): capped exponential, full jitter), so
// that a thousand gates waiting for their apps do not poll in step. It
// returns the number of calls made and fn's last error: nil, an error
// notYet refused (final), or, when ctx ended first, the last not-yet
// error (ctx's own error if fn never returned one).
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
		t := time.NewTimer(p.Delay(n))
		select {
		case <-ctx.Done():
			t.Stop()
			return calls, err
		case <-t.C:
		}
	}
}
