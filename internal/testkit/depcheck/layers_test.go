package depcheck_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
)

const mod = "github.com/lockstep-dev/lockstep"

// TestLayers holds the tree's layering (issue 15): the domain (manifest/)
// and the boot gate (admission/) sit below the comparison engine
// (verify/), so neither imports it, directly or not. (The boot gate's
// CDN check is admission.CDNChecker, implemented over verify/cdn by
// verify/cdn/cdngate, outside admission/.)
func TestLayers(t *testing.T) {
	depcheck.Assert(t,
		depcheck.Rule{
			Packages: []string{mod + "/manifest/..."},
			Deny:     []string{mod + "/verify/..."},
		},
		depcheck.Rule{
			Packages: []string{mod + "/admission/..."},
			Deny:     []string{mod + "/verify/..."},
		},
		// cdn prune's library keeps gc's rules (manifest/store) and
		// needs nothing of the comparison engine or the CLI.
		depcheck.Rule{
			Packages: []string{mod + "/prune/..."},
			Deny:     []string{mod + "/verify/...", mod + "/cmd/...", "github.com/urfave/cli"},
		},
	)
}

// TestFleetReadsTheWire: the fleet check reads the agent's status through
// agentapi, the wire contract, and links nothing of the agent's server
// (Prometheus, IMDS) nor any other admission package.
func TestFleetReadsTheWire(t *testing.T) {
	depcheck.Assert(t,
		depcheck.Rule{Packages: []string{mod + "/verify/fleet"}, Deny: []string{mod + "/admission/..."}},
		depcheck.Rule{
			Packages: []string{mod + "/agentapi"},
			Deny:     []string{mod + "/admission/...", mod + "/verify/...", "github.com/prometheus/", "github.com/aws/"},
		},
	)
}
