package admission_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps guards the boot path's weight: the gate's packages must not
// pull in the CLI framework, the cosign CLI or Kubernetes (but for the
// CRI's protocol types).
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/lockstep-dev/lockstep/admission",
		"github.com/lockstep-dev/lockstep/admission/running", "github.com/lockstep-dev/lockstep/admission/probe",
		"github.com/lockstep-dev/lockstep/admission/gate").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/urfave/cli", "github.com/sigstore/cosign/v2/cmd", "k8s.io/", "github.com/spf13/cobra", "github.com/lockstep-dev/lockstep/cmd"} {
			// The CRI's generated protocol types (no client-go, no
			// apimachinery) are what the running package's cri: source
			// speaks.
			if strings.HasPrefix(dep, banned) && !strings.HasPrefix(dep, "k8s.io/cri-api/") {
				t.Errorf("the boot gate depends on %s", dep)
			}
		}
	}
}
