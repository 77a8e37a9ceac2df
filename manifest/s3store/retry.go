package s3store

import (
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// Retryer returns the SDK retryer for p, the policy of the
// internal/transport client whose Transport the SDK sends on: p's
// MaxAttempts, and full-jitter backoff, a random wait in
// [0, min(MaxDelay, BaseDelay*2^attempt)). The SDK's retry token bucket
// stays as the retry budget. Conditional-write failures (412, 409) are not
// retried by it: Move re-reads and decides.
func Retryer(p transport.Policy) aws.Retryer {
	d := transport.DefaultPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = d.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = d.MaxDelay
	}
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = p.MaxAttempts
		o.MaxBackoff = p.MaxDelay
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			ceil := p.BaseDelay << min(attempt, 30)
			if ceil <= 0 || ceil > p.MaxDelay {
				ceil = p.MaxDelay
			}
			return time.Duration(rand.Int64N(int64(ceil)) + 1), nil
		})
	})
}
