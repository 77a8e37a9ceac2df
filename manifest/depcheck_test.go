package manifest_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoVerify guards the layering: the domain (manifest and every package
// under it) imports nothing of the verification engine (verify and its
// children); workflows over both, like record, live beside them.
func TestNoVerify(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/lockstep-dev/lockstep/manifest/...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/lockstep-dev/lockstep/manifest") {
		t.Fatalf("go list -deps lists no manifest package: %q", out)
	}
	for _, dep := range deps {
		if dep == "github.com/lockstep-dev/lockstep/verify" || strings.HasPrefix(dep, "github.com/lockstep-dev/lockstep/verify/") {
			t.Errorf("a package under manifest/ depends on %s", dep)
		}
	}
}
