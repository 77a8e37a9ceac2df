package agent

import (
	"context"
	"errors"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

type sourceFunc func(context.Context) (*manifest.Signed, error)

func (f sourceFunc) Fetch(ctx context.Context) (*manifest.Signed, error) { return f(ctx) }

func TestAdmission(t *testing.T) {
	m := fleettest.Signed(t, 7)
	tests := []struct {
		name     string
		source   manifest.Source
		running  string
		state    string
		manifest bool
	}{
		{"the release", sourceFunc(func(context.Context) (*manifest.Signed, error) { return m, nil }), fleettest.Amd64Cfg.String(), StateAdmitted, true},
		{"a re-pushed digest", sourceFunc(func(context.Context) (*manifest.Signed, error) { return m, nil }), fleettest.Repushed.String(), StateRefused, true},
		{"the manifest unreachable", sourceFunc(func(context.Context) (*manifest.Signed, error) { return nil, errors.New("store down") }), fleettest.Amd64Cfg.String(), StateUnverified, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(Config{Checker: Admission(admission.Config{
				CDN:    cdngate.Checker{},
				Source: tt.source, AllowUnsigned: true, Image: "web", Platform: "linux/amd64",
				Running: running.Given{Value: tt.running},
			})})
			r := a.CheckNow(context.Background())
			st := a.Status()
			if st.State != tt.state {
				t.Fatalf("state %s (findings %+v), want %s", st.State, r.Decision.Findings, tt.state)
			}
			if got := st.Manifest != nil; got != tt.manifest {
				t.Fatalf("manifest in the status: %t, want %t", got, tt.manifest)
			}
			if st.Running == nil || st.Running.Digest.String() != tt.running || st.Running.Source != "digest" {
				t.Errorf("running = %+v, want %s from digest", st.Running, tt.running)
			}
			if st.Image != "web" || st.Platform != "linux/amd64" {
				t.Errorf("image %q platform %q", st.Image, st.Platform)
			}
			if tt.manifest && (st.Manifest.Digest != m.Digest || st.Manifest.Generation != 7) {
				t.Errorf("manifest = %+v, want %s at 7", st.Manifest, m.Digest)
			}
		})
	}
}
