package webhook

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
)

// TestDependencies keeps the webhook's weight in check: it must not pull
// in the CLI framework or the cosign CLI (signature checks come through a
// manifest.Verifier).
func TestDependencies(t *testing.T) {
	depcheck.Assert(t, depcheck.Rule{
		Packages: []string{"github.com/lockstep-dev/lockstep/admission/webhook"},
		Deny:     []string{"github.com/urfave/cli", "github.com/sigstore/cosign/v2/cmd", "github.com/spf13/cobra", "k8s.io/client-go"},
	})
}
