package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// fakeChecker returns the results it is given, in turn, and counts calls.
type fakeChecker struct {
	mu      sync.Mutex
	results []Result
	calls   atomic.Int64
	done    chan int64
}

func (f *fakeChecker) Check(ctx context.Context) Result {
	f.mu.Lock()
	r := f.results[0]
	if len(f.results) > 1 {
		f.results = f.results[1:]
	}
	f.mu.Unlock()
	n := f.calls.Add(1)
	if f.done != nil {
		select {
		case f.done <- n:
		default:
		}
	}
	return r
}

func admitted(t *testing.T, gen int64, served ...string) Result {
	return Result{
		Decision: admission.Decision{Allowed: true, Findings: []admission.Finding{}, At: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)},
		Image:    "web", Platform: "linux/amd64",
		Running: fleettest.Amd64, RunningSource: "digest",
		Manifest: fleettest.Signed(t, gen),
		Probed:   served != nil, Served: served,
	}
}

func refusedResult(t *testing.T) Result {
	r := admitted(t, 7, "index.html", "assets/app-9999.js")
	r.Running = fleettest.Repushed
	r.Decision = admission.Decision{Allowed: false, At: r.Decision.At, Findings: []admission.Finding{
		{Kind: admission.KindImageDigestMismatch, Severity: admission.Refuse, Subject: "web", Got: fleettest.Repushed.String(), Want: fleettest.Index.String(), Message: "running digest is not the release's"},
		{Kind: admission.KindAssetNotInManifest, Severity: admission.Refuse, Subject: "assets/app-9999.js", Message: "served asset not in the manifest"},
	}}
	return r
}

func get(t *testing.T, h http.Handler, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHealthzFollowsTheLastDecision(t *testing.T) {
	fc := &fakeChecker{results: []Result{admitted(t, 7), refusedResult(t), admitted(t, 7)}}
	a := New(Config{Checker: fc})
	h := a.Handler(ServeOptions{})
	steps := []struct {
		name string
		want int
		body string
	}{
		{"before the first check", http.StatusServiceUnavailable, "pending"},
		{"after an admission", http.StatusOK, "admitted"},
		{"after a refusal", http.StatusServiceUnavailable, "refused"},
		{"admitted again", http.StatusOK, "admitted"},
	}
	for i, s := range steps {
		if i > 0 {
			a.CheckNow(context.Background())
		}
		rec := get(t, h, "/healthz")
		if rec.Code != s.want || strings.TrimSpace(rec.Body.String()) != s.body {
			t.Errorf("%s: /healthz = %d %q, want %d %q", s.name, rec.Code, rec.Body.String(), s.want, s.body)
		}
	}
}

func TestHealthzRefusesAfterAPanic(t *testing.T) {
	a := New(Config{Checker: CheckerFunc(func(context.Context) Result { panic("boom") })})
	r := a.CheckNow(context.Background())
	if r.Decision.Allowed || !r.Decision.Unverified {
		t.Fatalf("a panicking check decided %+v, want an unverified refusal", r.Decision)
	}
	if rec := get(t, a.Handler(ServeOptions{}), "/healthz"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/healthz after a panic = %d, want 503", rec.Code)
	}
}

func TestStatus(t *testing.T) {
	m := fleettest.Manifest(7)
	tests := []struct {
		name   string
		result Result
		check  func(t *testing.T, s Status)
	}{
		{"admitted, every asset served", admitted(t, 7, fleettest.Assets...), func(t *testing.T, s Status) {
			if s.State != StateAdmitted || s.Assets == nil || !s.Assets.Complete || s.Assets.Fingerprint != m.Assets.Fingerprint {
				t.Errorf("status %+v assets %+v: want admitted, complete, fingerprint %s", s, s.Assets, m.Assets.Fingerprint)
			}
		}},
		{"admitted, part of the assets served", admitted(t, 7, "index.html", "assets/app-1a2b.js", "index.html"), func(t *testing.T, s Status) {
			a := s.Assets
			if a.Complete || a.Served != 2 || a.InManifest != 2 || a.ManifestAssets != 4 || len(a.NotInManifest) != 0 {
				t.Errorf("assets = %+v, want 2 served, all in the manifest, not complete", a)
			}
			if a.Fingerprint == m.Assets.Fingerprint {
				t.Errorf("a subset has the manifest's fingerprint %s", a.Fingerprint)
			}
		}},
		{"refused, an unknown asset", refusedResult(t), func(t *testing.T, s Status) {
			if s.State != StateRefused || s.Running.Digest != fleettest.Repushed {
				t.Errorf("state %s running %v, want refused on %s", s.State, s.Running, fleettest.Repushed)
			}
			if got := s.Assets.NotInManifest; len(got) != 1 || got[0] != "assets/app-9999.js" {
				t.Errorf("notInManifest = %q, want [assets/app-9999.js]", got)
			}
			if len(s.Decision.Findings) != 2 {
				t.Errorf("findings = %+v, want 2", s.Decision.Findings)
			}
		}},
		{"no probes", admitted(t, 7), func(t *testing.T, s Status) {
			if s.Assets != nil {
				t.Errorf("assets = %+v without probes, want none", s.Assets)
			}
		}},
		{"no manifest", Result{Decision: admission.Decision{Unverified: true, Findings: []admission.Finding{{Kind: admission.KindDependencyUnreachable, Severity: admission.Refuse, Message: "store down"}}}}, func(t *testing.T, s Status) {
			if s.State != StateUnverified || s.Manifest != nil {
				t.Errorf("state %s manifest %+v, want unverified without a manifest", s.State, s.Manifest)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(Config{Checker: &fakeChecker{results: []Result{tt.result}}, Identity: Identity{Hostname: "web-1", Source: "hostname"}, Version: "test"})
			a.CheckNow(context.Background())
			rec := get(t, a.Handler(ServeOptions{}), "/v1/status")
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("/v1/status = %d %s", rec.Code, rec.Header().Get("Content-Type"))
			}
			var s Status
			dec := json.NewDecoder(rec.Body)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&s); err != nil {
				t.Fatalf("decoding the status: %v", err)
			}
			if s.APIVersion != StatusAPIVersion || s.Kind != StatusKind || s.Instance.Hostname != "web-1" || s.Checks != 1 || s.CheckedAt == nil {
				t.Errorf("status header = %+v", s)
			}
			tt.check(t, s)
		})
	}
}

func TestStatusJSONShape(t *testing.T) {
	a := New(Config{Checker: &fakeChecker{results: []Result{refusedResult(t)}}, Identity: Identity{InstanceID: "i-0abc", ASG: "web-asg", Hostname: "ip-10-0-0-1", Source: "imds"}, Version: "test",
		Now: func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }})
	a.CheckNow(context.Background())
	b, err := json.MarshalIndent(a.Status(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/status.golden.json", append(b, '\n'))
}

func TestMetrics(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r := refusedResult(t)
	r.Certificates = []transport.Certificate{{Host: "cdn.example:443", NotAfter: now.Add(10 * 24 * time.Hour)}}
	a := New(Config{Checker: &fakeChecker{results: []Result{admitted(t, 7), r}}, Now: func() time.Time { return now }})
	a.CheckNow(context.Background())
	a.CheckNow(context.Background())
	body := get(t, a.Handler(ServeOptions{}), "/metrics").Body.String()
	for _, want := range []string{
		MetricChecks + `{result="admitted"} 1`,
		MetricChecks + `{result="refused"} 1`,
		MetricChecks + `{result="unverified"} 0`,
		MetricAdmitted + " 0",
		MetricMismatch + " 1",
		MetricGeneration + " 7",
		MetricFindings + `{kind="image-digest-mismatch",severity="refuse"} 1`,
		MetricTLSExpiry + `{endpoint="cdn.example:443"} 864000`,
		MetricCheckDuration + "_count 2",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

func TestWatchTriggersACheck(t *testing.T) {
	var gen atomic.Int64
	gen.Store(7)
	watched := make(chan int64, 16)
	fc := &fakeChecker{results: []Result{admitted(t, 7)}, done: make(chan int64, 1)}
	a := New(Config{
		Checker:  fc,
		Interval: time.Hour, // only the watch can start a second check
		Watch: func(context.Context) (manifest.Digest, int64, error) {
			g := gen.Load()
			select {
			case watched <- g:
			default:
			}
			return fleettest.Index, g, nil
		},
		WatchInterval: time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Run(ctx)
	if n := <-fc.done; n != 1 {
		t.Fatalf("first check is call %d", n)
	}
	<-watched // the watch has seen generation 7
	<-watched
	gen.Store(8)
	select {
	case n := <-fc.done:
		if n != 2 {
			t.Errorf("check after the channel moved is call %d, want 2", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the channel moved to generation 8 and no check followed")
	}
}

func TestWaitHasJitter(t *testing.T) {
	a := New(Config{Checker: &fakeChecker{}, Interval: 10 * time.Second, Jitter: 0.5})
	lo, hi := time.Hour, time.Duration(0)
	for range 1000 {
		w := a.wait()
		lo, hi = min(lo, w), max(hi, w)
	}
	if lo < 5*time.Second || hi > 15*time.Second || hi-lo < 5*time.Second {
		t.Errorf("waits in [%v, %v], want spread over [5s, 15s]", lo, hi)
	}
}

func TestWatchChannel(t *testing.T) {
	w := WatchChannel(channelFunc(func(_ context.Context, release, channel string) (*manifest.Pointer, error) {
		return &manifest.Pointer{Release: release, Channel: channel, Digest: fleettest.Index, Generation: 9}, nil
	}), "store-web", "production")
	d, g, err := w(context.Background())
	if err != nil || d != fleettest.Index || g != 9 {
		t.Errorf("WatchChannel() = %v, %d, %v", d, g, err)
	}
}

type channelFunc func(ctx context.Context, release, channel string) (*manifest.Pointer, error)

func (f channelFunc) Channel(ctx context.Context, release, channel string) (*manifest.Pointer, error) {
	return f(ctx, release, channel)
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
