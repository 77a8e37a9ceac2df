package fleet

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/agenttest"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
)

// BenchmarkCheck measures Check over a fleet of 1,000 instances served by
// one loopback server (one URL per instance, by query); bench/fleet.sh
// measures the CLI over 10,000 ports.
func BenchmarkCheck(b *testing.B) {
	const n = 1000
	a := agenttest.Agent(b, agenttest.Good("i-0"))
	srv := httptest.NewServer(a.Handler(agent.ServeOptions{}))
	defer srv.Close()
	targets := make([]Target, n)
	for i := range targets {
		targets[i] = Target{URL: fmt.Sprintf("%s%s?instance=%d", srv.URL, StatusPath, i), Spec: "bench"}
	}
	m := fleettest.Signed(b, 7)
	b.ReportAllocs()
	for b.Loop() {
		r, err := Check(context.Background(), m, targets, Options{})
		if err != nil || r.Summary.Match != n {
			b.Fatalf("Check = %+v, %v", r.Summary, err)
		}
	}
	b.ReportMetric(float64(n), "instances/op")
}
