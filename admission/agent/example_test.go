package agent_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/agent"
)

func Example() {
	admitted := false
	a := agent.New(agent.Config{
		Identity: agent.Identity{Hostname: "web-1", Source: "hostname"},
		// In lockstep agent the checker is agent.Admission(admission.Config{...}).
		Checker: agent.CheckerFunc(func(context.Context) agent.Result {
			return agent.Result{Decision: admission.Decision{Allowed: admitted}}
		}),
	})
	srv := httptest.NewServer(a.Handler(agent.ServeOptions{}))
	defer srv.Close()
	health := func() {
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d %s", resp.StatusCode, body)
	}
	health() // before the first check
	a.CheckNow(context.Background())
	health()
	admitted = true
	a.CheckNow(context.Background())
	health()
	// Output:
	// 503 pending
	// 503 refused
	// 200 admitted
}
