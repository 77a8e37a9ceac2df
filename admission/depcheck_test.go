package admission_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/depcheck"
)

// TestDeps guards the boot path's weight: the gate's packages must not
// pull in the CLI framework, the cosign CLI or Kubernetes.
func TestDeps(t *testing.T) {
	const a = "github.com/lockstep-dev/lockstep/admission"
	depcheck.Assert(t, depcheck.Rule{
		Packages: []string{a, a + "/running", a + "/probe", a + "/gate"},
		Deny:     []string{"github.com/urfave/cli", "github.com/sigstore/cosign/v2/cmd", "k8s.io/", "github.com/spf13/cobra", "github.com/lockstep-dev/lockstep/cmd"},
	})
}
