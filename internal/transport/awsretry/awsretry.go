// Package awsretry configures the AWS SDK's standard retryer to lockstep's
// network policy, so that internal/transport stays free of AWS imports.
//
//	client := transport.New(policy)
//	cfg, _ := config.LoadDefaultConfig(ctx,
//		config.WithHTTPClient(&http.Client{Transport: client.Transport()}),
//		config.WithRetryer(func() aws.Retryer { return awsretry.New(policy) }))
//
// The SDK keeps its own classification of what is retryable (throttling
// codes, 5xx, connection errors); attempts, backoff and budget follow the
// policy.
package awsretry

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// tokenCost is what one retry costs in the SDK's token bucket; a first
// attempt that succeeds adds one token, so retries come to 1/tokenCost of
// good requests. With RetryRatio 0.1 that is 10.
//
// The SDK's bucket charges retries rather than failures, so it cannot be
// transport's throttle exactly; sized at RetryFloor/2 retries, it gives the
// same bounds: about RetryFloor/2 retries against a dead service, retries
// at most RetryRatio of good requests beyond that.
func tokenCost(p transport.Policy) uint {
	return uint(max(1, int(1/p.RetryRatio+0.5)))
}

// Options returns the StandardOptions setter for p: MaxAttempts, a full
// jitter Backoff capped at MaxDelay, and a retry token bucket of
// RetryFloor/2 retries that refills by RetryRatio per successful request.
func Options(p transport.Policy) func(*retry.StandardOptions) {
	p = p.WithDefaults()
	cost := tokenCost(p)
	return func(o *retry.StandardOptions) {
		o.MaxAttempts = p.MaxAttempts
		o.MaxBackoff = p.MaxDelay
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			// The SDK counts the first retry as attempt 1.
			return p.Delay(attempt - 1), nil
		})
		o.RateLimiter = ratelimit.NewTokenRateLimit(uint(max(1, p.RetryFloor/2)) * cost)
		o.RetryCost = cost
		o.ThrottlingRetryCost = cost
		o.NoRetryIncrement = 1
	}
}

// New returns the SDK's standard retryer configured to p.
func New(p transport.Policy) *retry.Standard {
	return retry.NewStandard(Options(p))
}
