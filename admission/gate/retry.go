package gate

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// Retryer returns the AWS SDK retryer for the shared network policy: the
// policy's attempts, exponential backoff with full jitter capped at its
// MaxDelay, and the SDK's retry token bucket as the retry budget. Pass it
// with the transport's Client.Transport() as HTTP client, so that the SDK
// is the only one retrying.
func Retryer(p transport.Policy) aws.Retryer {
	p = transport.New(p).Policy() // the defaults, filled in
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = p.MaxAttempts
		o.MaxBackoff = p.MaxDelay
		o.Backoff = retry.NewExponentialJitterBackoff(p.MaxDelay)
	})
}
