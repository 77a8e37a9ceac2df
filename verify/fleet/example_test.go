package fleet_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/fleet"
)

// exampleAgent serves the status of an agent that observed running.
func exampleAgent(id string, m *manifest.Signed, running manifest.Digest) *httptest.Server {
	a := agent.New(agent.Config{
		Identity: agent.Identity{InstanceID: id, Source: "imds"},
		Checker: agent.CheckerFunc(func(context.Context) agent.Result {
			return agent.Result{
				Decision: admission.Decision{Allowed: running != fleettest.Repushed},
				Image:    "web", Platform: "linux/amd64", Running: running, Manifest: m,
			}
		}),
	})
	a.CheckNow(context.Background())
	return httptest.NewServer(a.Handler(agent.ServeOptions{}))
}

func ExampleCheck() {
	raw, _ := fleettest.Manifest(7).Indent()
	m, _ := manifest.NewSigned(raw, "release.json")
	var targets []fleet.Target
	for i, running := range []manifest.Digest{fleettest.Amd64, fleettest.Amd64Cfg, fleettest.Repushed} {
		srv := exampleAgent(fmt.Sprintf("i-%d", i+1), m, running)
		defer srv.Close()
		targets = append(targets, fleet.Target{URL: srv.URL + fleet.StatusPath})
	}
	r, err := fleet.Check(context.Background(), m, targets, fleet.Options{})
	fmt.Println(r.Summary.Result, r.Summary.Match, "of", r.Summary.Instances, "match")
	for _, in := range r.Divergent {
		fmt.Println(in.Name, in.Differences[0].Kind, in.Differences[0].Got)
	}
	fmt.Println(err != nil)
	// Output:
	// divergent 2 of 3 match
	// i-3 image-digest sha256:9999999999999999999999999999999999999999999999999999999999999999
	// true
}
