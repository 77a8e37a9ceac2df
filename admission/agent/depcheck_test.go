package agent_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
)

// TestDeps guards the agent's weight: it runs on every instance beside the
// application, so it must not pull in the CLI framework, the cosign CLI or
// Kubernetes (but for the CRI's protocol types).
func TestDeps(t *testing.T) {
	depcheck.Assert(t, depcheck.Rule{
		Packages: []string{"github.com/lockstep-dev/lockstep/admission/agent"},
		Deny:     []string{"github.com/urfave/cli", "github.com/sigstore/cosign/v2/cmd", "k8s.io/", "github.com/spf13/cobra", "github.com/lockstep-dev/lockstep/cmd"},
		// The CRI's generated protocol types (no client-go, no
		// apimachinery) are what the running package's cri: source speaks.
		Allow: []string{"k8s.io/cri-api/..."},
	})
}
