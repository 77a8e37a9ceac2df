package provenance_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
)

// TestDeps: the provenance library runs at boot (admit
// --require-provenance) and is held to the boot path's rule: no CLI
// framework, no cosign CLI, no keyless signing, no cloud KMS SDK.
func TestDeps(t *testing.T) {
	depcheck.Assert(t, depcheck.Rule{Packages: []string{"github.com/lockstep-dev/lockstep/verify/provenance"}, Deny: []string{
		"github.com/sigstore/cosign/v2/cmd/...",
		"github.com/urfave/cli",
		"github.com/lockstep-dev/lockstep/cmd/...",
		"github.com/lockstep-dev/lockstep/admission/...",
		"github.com/lockstep-dev/lockstep/manifest/signature/keyless",
		"github.com/sigstore/cosign/v2/pkg/providers",
		"github.com/sigstore/sigstore/pkg/signature/kms/aws",
		"k8s.io/client-go",
	}})
}
