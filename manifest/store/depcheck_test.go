package store_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
)

// TestDeps guards the boot path's weight: what a consumer links to read a
// store channel and keep its trusted state must not pull in the CLI
// framework, cosign, or (for the directory store) the AWS SDK; and
// package manifest imports no AWS at all.
func TestDeps(t *testing.T) {
	const m = "github.com/lockstep-dev/lockstep/manifest"
	depcheck.Assert(t,
		depcheck.Rule{Packages: []string{m}, Deny: []string{"github.com/aws/", "github.com/urfave/cli"}},
		depcheck.Rule{
			Packages: []string{m + "/store", m + "/trusted", m + "/filestore", m + "/blobstore"},
			Deny:     []string{"github.com/aws/", "github.com/urfave/cli", "github.com/sigstore/cosign"},
		},
		depcheck.Rule{Packages: []string{m + "/s3store"}, Deny: []string{"github.com/urfave/cli", "github.com/sigstore/cosign"}},
	)
}
