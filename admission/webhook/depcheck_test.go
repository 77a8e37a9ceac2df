package webhook

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the webhook's weight in check: it must not pull
// in the CLI framework or the cosign CLI (signature checks come through a
// manifest.Verifier).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/urfave/cli", "github.com/sigstore/cosign/v2/cmd", "github.com/spf13/cobra", "k8s.io/client-go"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("admission/webhook depends on %s", dep)
			}
		}
	}
}
