package admission_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
)

// TestDeps guards the boot path's weight: the gate's packages must not
// pull in the CLI framework, the cosign CLI or Kubernetes (but for the
// CRI's protocol types).
func TestDeps(t *testing.T) {
	const a = "github.com/lockstep-dev/lockstep/admission"
	depcheck.Assert(t, depcheck.Rule{
		Packages: []string{a, a + "/running", a + "/probe", a + "/gate"},
		Deny:     []string{"github.com/urfave/cli", "github.com/sigstore/cosign/v2/cmd", "k8s.io/", "github.com/spf13/cobra", "github.com/lockstep-dev/lockstep/cmd"},
		// The CRI's generated protocol types (no client-go, no
		// apimachinery) are what the running package's cri: source speaks.
		Allow: []string{"k8s.io/cri-api/..."},
	})
}
