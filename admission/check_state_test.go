package admission_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
)

// stuck is a source that ignores its context.
type stuck struct{ release chan struct{} }

func (s stuck) Observe(context.Context) (*running.Observation, error) {
	<-s.release
	return nil, errors.New("released")
}

func TestCheckDeadline(t *testing.T) {
	fx := newFixture(t, v1Assets, v1Page)
	cfg := fx.config(amd64Conf.String())
	s := stuck{release: make(chan struct{})}
	defer close(s.release)
	cfg.Running = s
	cfg.Timeout = 300 * time.Millisecond
	start := time.Now()
	d := admission.Check(context.Background(), cfg)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Check took %s with a deadline of %s", elapsed, cfg.Timeout)
	}
	if d.Allowed || !d.Unverified || !d.Has(admission.KindDependencyUnreachable) {
		t.Fatalf("a check past its deadline must refuse as unverified:\n%s", dump(d))
	}
	if !strings.Contains(dump(d), "deadline") {
		t.Errorf("the finding does not say the deadline was reached:\n%s", dump(d))
	}
}

func TestCheckConcurrent(t *testing.T) {
	fx := newFixture(t, v1Assets, v1Page)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := amd64Conf.String()
			if i%2 == 1 {
				r = stranger.String()
			}
			d := admission.Check(context.Background(), fx.config(r))
			if d.Allowed != (i%2 == 0) {
				t.Errorf("check %d: Allowed = %v\n%s", i, d.Allowed, dump(d))
			}
		})
	}
	wg.Wait()
}

// refusingSource returns a refusal of the trusted source.
type refusingSource struct{ err error }

func (s refusingSource) Fetch(context.Context) (*manifest.Signed, error) { return nil, s.err }

// trustedFixture is a fixture, an empty trusted state, and the fixture's
// config.
func trustedFixture(t *testing.T) (*fixture, *trusted.State, admission.Config) {
	t.Helper()
	fx := newFixture(t, v1Assets, v1Page)
	state, err := trusted.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return fx, state, fx.config(amd64Conf.String())
}

// TestCheckTrustedState runs Check with the real trusted state as its
// guard: admitted generation 7 is recorded (not on a dry run), a lower
// generation is manifest-rollback, and a source's refusal maps by its
// kind.
func TestCheckTrustedState(t *testing.T) {
	ctx := context.Background()
	fx, state, cfg := trustedFixture(t)
	cfg.Guard = state
	cfg.DryRun = true
	if d := admission.Check(ctx, cfg); !d.Allowed {
		t.Fatalf("dry run refused:\n%s", dump(d))
	}
	if _, ok, _ := state.Get("store-web"); ok {
		t.Fatal("a dry run recorded the generation")
	}
	cfg.DryRun = false
	if d := admission.Check(ctx, cfg); !d.Allowed {
		t.Fatalf("refused:\n%s", dump(d))
	}
	if rec, ok, err := state.Get("store-web"); err != nil || !ok || rec.Generation != 7 {
		t.Fatalf("state after admitting 7 = %+v %v %v", rec, ok, err)
	}
	fx.m.Release.Generation = 6
	fx.write(t)
	d := admission.Check(ctx, cfg)
	if d.Allowed || !d.Has(admission.KindManifestRollback) || d.Unverified {
		t.Errorf("generation 6 after 7: want a manifest-rollback refusal (exit 1), got:\n%s", dump(d))
	}
	if rec, _, _ := state.Get("store-web"); rec.Generation != 7 {
		t.Errorf("a refusal moved the state to %d", rec.Generation)
	}
	for kind, want := range map[string]admission.Kind{
		trusted.KindRollback:     admission.KindManifestRollback,
		trusted.KindExpired:      admission.KindManifestExpired,
		trusted.KindWrongRelease: admission.KindManifestWrongRelease,
	} {
		cfg.Source = refusingSource{&trusted.RefusalError{Kind: kind, Release: "store-web", Err: errors.New("refused")}}
		if d := admission.Check(ctx, cfg); d.Allowed || !d.Has(want) {
			t.Errorf("a source refusing with %s: want a %s finding, got:\n%s", kind, want, dump(d))
		}
	}
}

// TestCheckSourceGuards: a *trusted.Source given as the Source, with no
// Guard, is the guard by its State: the trusted state is given once.
func TestCheckSourceGuards(t *testing.T) {
	ctx := context.Background()
	fx, state, cfg := trustedFixture(t)
	cfg.Source = &trusted.Source{Upstream: cfg.Source, State: state, Release: "store-web"}
	if d := admission.Check(ctx, cfg); !d.Allowed {
		t.Fatalf("refused:\n%s", dump(d))
	}
	if rec, ok, err := state.Get("store-web"); err != nil || !ok || rec.Generation != 7 {
		t.Fatalf("state after admitting 7 through the source = %+v %v %v; want generation 7 recorded", rec, ok, err)
	}
	fx.m.Release.Generation = 6
	fx.write(t)
	if d := admission.Check(ctx, cfg); d.Allowed || !d.Has(admission.KindManifestRollback) {
		t.Errorf("generation 6 after 7 through the source: want a manifest-rollback refusal, got:\n%s", dump(d))
	}
}

func TestCheckSample(t *testing.T) {
	assets := map[string]string{}
	for i := range 40 {
		assets[fmt.Sprintf("a/%02d.js", i)] = strings.Repeat("x", i)
	}
	page := `<script src="CDN/a/00.js"></script><script src="CDN/a/01.js"></script>`
	for _, tt := range []struct {
		sample  int
		all     bool
		checked int
	}{{0, false, 2}, {5, false, 7}, {100, false, 40}, {0, true, 40}} {
		fx := newFixture(t, assets, page)
		cfg := fx.config(amd64Conf.String())
		cfg.Sample, cfg.AllAssets = tt.sample, tt.all
		d := admission.Check(context.Background(), cfg)
		if !d.Allowed || d.CDNChecked != tt.checked || fx.cdnHits != tt.checked {
			t.Errorf("Sample %d AllAssets %v: Allowed %v, CDNChecked %d, CDN hits %d; want %d\n%s",
				tt.sample, tt.all, d.Allowed, d.CDNChecked, fx.cdnHits, tt.checked, dump(d))
		}
	}
}
