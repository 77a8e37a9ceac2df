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

// floors are the tree's floors, lowest first (DEVELOPERS.md, "Layout"; issue
// 38): a path says its floor. The ground helpers in internal/ import only
// verdict and each other; the libraries (every package not named below)
// none of the floors above them; the fixtures that `lockstep demo` ships
// and the tests share, in internal/fixture/, are imported (outside tests)
// by the demo, the test kit and the benchmarks alone, never by the CLI or
// a library; the demo and the CLI sit in cmd/; the test kit, in
// internal/testkit/, and the tools (benchmarks, scripts' and docs' tests,
// deployment checks) are above everything the binary links, so the binary
// links none of them.
var floors = depcheck.Floors{
	{Name: "verdict", Packages: []string{mod + "/verdict/..."}},
	{Name: "ground", Packages: []string{mod + "/internal/..."}},
	{Name: "library", Packages: []string{mod + "/..."}},
	{Name: "fixture", Packages: []string{mod + "/internal/fixture/..."}, ImportedBy: []string{"demo", "testkit", "tools"}},
	{Name: "demo", Packages: []string{mod + "/cmd/lockstep/internal/demo/..."}},
	{Name: "command", Packages: []string{mod + "/cmd/..."}},
	{Name: "testkit", Packages: []string{mod + "/internal/testkit/..."}},
	{Name: "tools", Packages: []string{mod + "/bench/...", mod + "/scripts/...", mod + "/docs/...", mod + "/deploy/..."}},
}

// platforms are the release's builds (.goreleaser.yaml's goos × goarch): a
// file built for one platform only imports only there.
var platforms = [][]string{
	{"GOOS=linux", "GOARCH=amd64"},
	{"GOOS=linux", "GOARCH=arm64"},
	{"GOOS=darwin", "GOARCH=amd64"},
	{"GOOS=darwin", "GOARCH=arm64"},
}

// TestFloors holds the floors over every package of the module, as each
// platform of the release builds it: no import of a non-test file runs up a
// floor, and the fixtures are imported only by the demo, the test kit and
// the tools. A failure names the importer and the import.
func TestFloors(t *testing.T) {
	for _, env := range platforms {
		g, err := depcheck.ListEnv(append(env, "CGO_ENABLED=0"), mod+"/...")
		if err != nil {
			t.Fatal(err)
		}
		vs, err := floors.Check(g)
		if err != nil {
			t.Errorf("%v: %v", env, err)
		}
		for _, v := range vs {
			t.Errorf("%v: %v", env, v)
		}
	}
}
