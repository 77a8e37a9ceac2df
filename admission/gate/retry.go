package gate

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/awsretry"
)

// Retryer returns the AWS SDK retryer for the shared network policy: it is
// awsretry.New(p) (the policy's attempts, full-jitter backoff capped at its
// MaxDelay, and a retry budget of RetryFloor/2 retries refilled by
// RetryRatio of good requests). Pass it with the transport's
// Client.Transport() as HTTP client, so that the SDK is the only one
// retrying.
func Retryer(p transport.Policy) aws.Retryer { return awsretry.New(p) }
