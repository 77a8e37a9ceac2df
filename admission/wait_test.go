package admission_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
)

// lateRuntime reports no container for its first calls, as a runtime does
// before the app's container is created, then the container.
type lateRuntime struct {
	calls  atomic.Int32
	absent int32
	err    error
	digest string
}

func (r *lateRuntime) Observe(ctx context.Context) (*running.Observation, error) {
	if r.calls.Add(1) <= r.absent {
		return nil, r.err
	}
	return running.Given{Value: r.digest}.Observe(ctx)
}

// slowApp answers 503 (the proxy in front of an app still starting) to
// its first requests, then the real page.
func slowApp(fx *fixture, unready int32, status int) *atomic.Int32 {
	var n atomic.Int32
	next := fx.app.Config.Handler
	fx.app.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= unready {
			http.Error(w, http.StatusText(status), status)
			return
		}
		next.ServeHTTP(w, r)
	})
	return &n
}

// TestCheckWaits is the boot gate on a real boot: what is not up yet is
// waited for until the deadline; what is wrong is refused at once.
func TestCheckWaits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(t *testing.T, fx *fixture, c *admission.Config)
		allowed bool
		waited  bool
		want    admission.Kind // the refusing kind, when refused
	}{
		{name: "container not created yet", allowed: true, waited: true, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			c.Running = &lateRuntime{absent: 3, err: fmt.Errorf("docker: %w", running.ErrNoContainer), digest: amd64Conf.String()}
		}},
		{name: "container not started yet", allowed: true, waited: true, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			c.Running = &lateRuntime{absent: 2, err: fmt.Errorf("created: %w", running.ErrNotRunning), digest: amd64Conf.String()}
		}},
		{name: "app behind a proxy answers 503 then its page", allowed: true, waited: true, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			slowApp(fx, 5, http.StatusServiceUnavailable)
		}},
		{name: "502 then the page", allowed: true, waited: true, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			slowApp(fx, 3, http.StatusBadGateway)
		}},
		{name: "app refusing connections, up 1 s later", allowed: true, waited: true, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			addr := fx.app.Listener.Addr().String()
			fx.app.Listener.Close()
			go func() {
				time.Sleep(time.Second)
				l, err := net.Listen("tcp", addr)
				if err != nil {
					t.Errorf("reopening %s: %v", addr, err)
					return
				}
				go http.Serve(l, fx.app.Config.Handler)
				t.Cleanup(func() { l.Close() })
			}()
		}},
		{name: "a mismatch is final", want: admission.KindImageDigestMismatch, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			c.Running = running.Given{Value: stranger.String()}
		}},
		{name: "a 404 is final", want: admission.KindDependencyUnreachable, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			slowApp(fx, 1000, http.StatusNotFound)
		}},
		{name: "several containers are final", want: admission.KindDependencyUnreachable, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			c.Running = &lateRuntime{absent: 1000, err: fmt.Errorf("docker: %w", running.ErrAmbiguous)}
		}},
		{name: "never up: refused at the wait's end, saying so", want: admission.KindDependencyUnreachable, waited: true, edit: func(t *testing.T, fx *fixture, c *admission.Config) {
			slowApp(fx, 1<<30, http.StatusServiceUnavailable)
			c.Timeout = 1200 * time.Millisecond
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, v1Assets, v1Page)
			cfg := fx.config(amd64Conf.String())
			tc.edit(t, fx, &cfg)
			d := admission.Check(context.Background(), cfg)
			if d.Allowed != tc.allowed || (tc.want != "" && !d.Has(tc.want)) {
				t.Fatalf("Allowed = %v, want %v (refusing %q):\n%s", d.Allowed, tc.allowed, tc.want, dump(d))
			}
			if (d.Waited > 0) != tc.waited {
				t.Errorf("Waited = %s; want a wait: %v\n%s", d.Waited, tc.waited, dump(d))
			}
			if d.Duration > cfg.Timeout {
				t.Errorf("the check took %s, past its deadline of %s", d.Duration, cfg.Timeout)
			}
			if !tc.allowed && tc.waited && !strings.Contains(dump(d), "waited") {
				t.Errorf("the refusal does not say how long it waited:\n%s", dump(d))
			}
		})
	}
}
