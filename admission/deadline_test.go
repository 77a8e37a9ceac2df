package admission_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/transport"
)

// ownWorkCDN stands for lockstep's own work in the CDN step (hashing,
// walking a graph): it computes, sending nothing, until the check's
// context ends.
type ownWorkCDN struct{}

func (ownWorkCDN) CheckAssets(ctx context.Context, req admission.CDNRequest) ([]admission.AssetStatus, error) {
	sum := sha256.Sum256(nil)
	for ctx.Err() == nil {
		sum = sha256.Sum256(sum[:])
	}
	return nil, ctx.Err()
}

// TestDeadlineCause (issue 35, item 9): a deadline reached during
// lockstep's own work is deadline-own-work, never a dependency being
// unreachable; one reached waiting for a dependency names it, with its
// last failure. Both are could-not-verify.
func TestDeadlineCause(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(t *testing.T, fx *fixture, c *admission.Config)
		want    admission.Kind
		subject string   // the finding's subject contains it
		says    []string // its message says each
		not     admission.Kind
	}{
		{name: "own work in the CDN step", want: admission.KindDeadlineOwnWork, not: admission.KindDependencyUnreachable,
			subject: "checking assets on the CDN", says: []string{"own work", "no dependency failed"},
			edit: func(t *testing.T, fx *fixture, c *admission.Config) { c.CDN = ownWorkCDN{} }},
		{name: "a CDN that does not answer", want: admission.KindDependencyUnreachable, not: admission.KindDeadlineOwnWork,
			subject: "host 127.0.0.1:", says: []string{"waiting for host 127.0.0.1:", "while checking assets on the CDN"},
			edit: func(t *testing.T, fx *fixture, c *admission.Config) {
				hang := make(chan struct{})
				t.Cleanup(func() { close(hang) })
				fx.cdn.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang })
			}},
		{name: "a CDN that answers 503, retried until the deadline", want: admission.KindDependencyUnreachable, not: admission.KindDeadlineOwnWork,
			subject: "host 127.0.0.1:", says: []string{"its last failure", "503"},
			edit: func(t *testing.T, fx *fixture, c *admission.Config) {
				fx.cdn.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Error(w, "busy", http.StatusServiceUnavailable)
				})
				p := c.Client.Policy()
				p.MaxAttempts, p.BaseDelay, p.MaxDelay = 1000, 100*time.Millisecond, 200*time.Millisecond
				p.BreakerFailures, p.RetryFloor = -1, 1e6
				c.Client = transport.New(p)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, v1Assets, v1Page)
			cfg := fx.config(amd64Conf.String())
			cfg.Timeout = 1500 * time.Millisecond
			tc.edit(t, fx, &cfg)
			d := admission.Check(context.Background(), cfg)
			if d.Allowed || !d.Unverified || d.Has(tc.not) {
				t.Fatalf("Allowed %v, Unverified %v, want a could-not-verify refusal (%s, never %s):\n%s", d.Allowed, d.Unverified, tc.want, tc.not, dump(d))
			}
			var found bool
			for _, f := range d.Refusals() {
				if f.Kind != tc.want || !strings.Contains(f.Subject, tc.subject) {
					continue
				}
				found = true
				for _, s := range tc.says {
					if !strings.Contains(f.Message, s) {
						t.Errorf("%s finding does not say %q: %s", f.Kind, s, f.Message)
					}
				}
			}
			if !found {
				t.Fatalf("no %s finding about %q:\n%s", tc.want, tc.subject, dump(d))
			}
			if d.Duration > cfg.Timeout+time.Second {
				t.Errorf("the check took %s, past its deadline of %s", d.Duration, cfg.Timeout)
			}
		})
	}
}

// hangingRuntime answers its first calls with cause, then never answers
// (each call waits for its context to end), as a daemon whose connection
// slots leaked did.
type hangingRuntime struct {
	answers int
	cause   error
	calls   int
}

func (r *hangingRuntime) Observe(ctx context.Context) (*running.Observation, error) {
	r.calls++
	if r.calls <= r.answers {
		return nil, r.cause
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestWaitKeepsItsCause (issue 36): a wait that ends names the last cause
// that said something, whatever the timeout; no call runs into the whole
// check's deadline (each has its own); and the wait is said at Info
// (what, why, the attempt, the time left).
func TestWaitKeepsItsCause(t *testing.T) {
	noSuch := fmt.Errorf("docker unix:///run/docker.sock: no such container acme-wbe: %w", running.ErrNoContainer)
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		rt      *hangingRuntime
		says    []string
	}{
		{"a mistyped container", 2 * time.Second, &hangingRuntime{answers: 1 << 30, cause: noSuch},
			[]string{"no such container acme-wbe", "waited"}},
		{"then a runtime that stops answering", 3 * time.Second, &hangingRuntime{answers: 2, cause: noSuch},
			[]string{"no such container acme-wbe", "did not answer within"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, v1Assets, v1Page)
			cfg := fx.config(amd64Conf.String())
			cfg.Timeout = tc.timeout
			cfg.Running = tc.rt
			var log bytes.Buffer
			cfg.Logger = slog.New(slog.NewTextHandler(&log, nil)) // the default level, Info
			d := admission.Check(context.Background(), cfg)
			if d.Allowed || !d.Unverified {
				t.Fatalf("want a could-not-verify refusal:\n%s", dump(d))
			}
			var msg string
			for _, f := range d.Refusals() {
				if f.Subject == "running digest" {
					msg = f.Message
				}
				if f.Kind == admission.KindDeadlineOwnWork || strings.Contains(f.Message, "deadline of") {
					t.Errorf("the check ran into its deadline: %s: %s", f.Kind, f.Message)
				}
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("the running digest's refusal does not say %q: %q\n%s", s, msg, dump(d))
				}
			}
			if d.Duration >= cfg.Timeout {
				t.Errorf("the check took %s, its whole deadline of %s", d.Duration, cfg.Timeout)
			}
			out := log.String()
			for _, s := range []string{"level=INFO msg=waiting", `for="the running image"`, "no such container acme-wbe", "attempt=1 ", "left="} {
				if !strings.Contains(out, s) {
					t.Errorf("the log does not say %q:\n%s", s, out)
				}
			}
		})
	}
}
