package store_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps guards the boot path's weight: what a consumer links to read a
// store channel and keep its trusted state must not pull in the CLI
// framework, cosign, or (for the directory store) the AWS SDK; and
// package manifest imports no AWS at all.
func TestDeps(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"github.com/lockstep-dev/lockstep/manifest":           {"github.com/aws/", "github.com/urfave/cli"},
		"github.com/lockstep-dev/lockstep/manifest/store":     {"github.com/aws/", "github.com/urfave/cli", "github.com/sigstore/cosign"},
		"github.com/lockstep-dev/lockstep/manifest/trusted":   {"github.com/aws/", "github.com/urfave/cli", "github.com/sigstore/cosign"},
		"github.com/lockstep-dev/lockstep/manifest/filestore": {"github.com/aws/", "github.com/urfave/cli", "github.com/sigstore/cosign"},
		"github.com/lockstep-dev/lockstep/manifest/s3store":   {"github.com/urfave/cli", "github.com/sigstore/cosign"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
