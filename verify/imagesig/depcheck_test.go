package imagesig_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
)

// bootPath are the packages a booting instance runs: the boot gate and
// the signature verification it calls.
var bootPath = []string{
	"github.com/lockstep-dev/lockstep/admission/...",
	"github.com/lockstep-dev/lockstep/verify/imagesig",
	"github.com/lockstep-dev/lockstep/manifest/signature",
}

// forbidden are imports the boot path must not pull in: the CLI
// frameworks and cosign's CLI, keyless signing (Fulcio, OIDC providers),
// and the cloud KMS SDKs (signing happens in CI, not at boot).
var forbidden = []string{
	"github.com/sigstore/cosign/v2/cmd/...",
	"github.com/urfave/cli",
	"github.com/lockstep-dev/lockstep/cmd/...",
	"github.com/lockstep-dev/lockstep/manifest/signature/keyless",
	"github.com/sigstore/cosign/v2/pkg/providers",
	"github.com/sigstore/sigstore/pkg/signature/kms/aws",
	"github.com/sigstore/sigstore/pkg/signature/kms/gcp",
	"github.com/sigstore/sigstore/pkg/signature/kms/azure",
	"github.com/sigstore/sigstore/pkg/signature/kms/hashivault",
	"k8s.io/client-go",
}

// TestBootPathDeps is a guard like go-containerregistry's
// depcheck_test.go: it lists the boot path's dependencies with `go list
// -deps` and fails on any forbidden one.
func TestBootPathDeps(t *testing.T) {
	depcheck.Assert(t, depcheck.Rule{Packages: bootPath, Deny: forbidden})
}
