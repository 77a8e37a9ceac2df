package s3store

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/awsretry"
)

// Retryer returns the SDK retryer for p, the policy of the
// internal/transport client whose Transport the SDK sends on: it is
// awsretry.New(p) (p's MaxAttempts, full-jitter backoff, and a retry
// budget of RetryFloor/2 retries refilled by RetryRatio of good requests).
// Conditional-write failures (412, 409) are not retried by it: Move
// re-reads and decides.
func Retryer(p transport.Policy) aws.Retryer { return awsretry.New(p) }
