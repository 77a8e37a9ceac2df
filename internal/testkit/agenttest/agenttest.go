// Package agenttest runs real agent endpoints over a fake check, for the
// tests of what reads them (the fleet check, the CLI, benchmarks).
package agenttest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/manifest"
)

// Instance is what a simulated instance's check observed.
type Instance struct {
	ID       string
	Running  manifest.Digest
	Platform string
	// Generation is that of the fixture manifest the agent checks against.
	Generation int64
	// Served is nil when the agent probes nothing.
	Served   []string
	Allowed  bool
	Findings []admission.Kind
}

// Good is an instance that runs fleettest's release exactly.
func Good(id string) Instance {
	return Instance{ID: id, Running: fleettest.Amd64, Platform: "linux/amd64", Generation: 7, Served: fleettest.Assets, Allowed: true}
}

// Repushed is an instance on a re-pushed digest that serves an asset ID the
// manifest lacks: what the Epic 2021 scale-up started.
func Repushed(id string) Instance {
	in := Good(id)
	in.Running, in.Allowed = fleettest.Repushed, false
	in.Served = append([]string{"assets/app-ffff.js"}, fleettest.Assets[1:]...)
	in.Findings = []admission.Kind{admission.KindImageDigestMismatch, admission.KindAssetNotInManifest}
	return in
}

// Agent returns an agent that has run one check reporting in's
// observations.
func Agent(t testing.TB, in Instance) *agent.Agent {
	t.Helper()
	m := fleettest.Signed(t, in.Generation)
	var fs []admission.Finding
	for _, k := range in.Findings {
		fs = append(fs, admission.Finding{Kind: k, Severity: admission.Refuse, Message: string(k)})
	}
	a := agent.New(agent.Config{
		Identity: agent.Identity{InstanceID: in.ID, Hostname: "host-" + in.ID, Source: "imds"},
		Checker: agent.CheckerFunc(func(context.Context) agent.Result {
			return agent.Result{
				Decision: admission.Decision{Allowed: in.Allowed, Findings: fs},
				Image:    "web", Platform: in.Platform, Running: in.Running, RunningSource: "digest",
				Manifest: m, Probed: in.Served != nil, Served: in.Served,
			}
		}),
	})
	a.CheckNow(context.Background())
	return a
}

// Serve serves Agent(t, in)'s endpoints on a loopback port until the test
// ends and returns its status URL.
func Serve(t testing.TB, in Instance, o agent.ServeOptions) string {
	t.Helper()
	srv := httptest.NewServer(Agent(t, in).Handler(o))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/status"
}
