package agent

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// Checker runs one admission check. It never fails: anything that goes
// wrong is a refusal in the Result's Decision (admission fails closed).
type Checker interface {
	Check(ctx context.Context) Result
}

// CheckerFunc adapts a function to a Checker.
type CheckerFunc func(ctx context.Context) Result

// Check calls f.
func (f CheckerFunc) Check(ctx context.Context) Result { return f(ctx) }

// Result is what one check found: the decision and the observations behind
// it, which the status serves.
type Result struct {
	Decision admission.Decision
	// Image is the manifest image role checked; Platform os/arch[/variant].
	Image    string
	Platform string
	// Running is the digest observed ("" if it could not be) and where.
	Running       manifest.Digest
	RunningSource string
	// Manifest is the manifest checked against; nil when it could not be
	// fetched or was refused before it was parsed.
	Manifest *manifest.Signed
	// Probed is true when the check probed the instance's pages; Served
	// holds the asset IDs those pages referenced.
	Probed bool
	Served []string
	// Certificates are the TLS endpoints the check touched.
	Certificates []transport.Certificate
}

// WatchFunc reads the current position of the store channel the agent
// follows: the manifest digest and generation it names.
type WatchFunc func(ctx context.Context) (manifest.Digest, int64, error)

// ChannelReader is the part of a manifest.Store that a channel watch needs.
type ChannelReader interface {
	Channel(ctx context.Context, release, channel string) (*manifest.Pointer, error)
}

// WatchChannel returns a WatchFunc that reads release's channel from s.
func WatchChannel(s ChannelReader, release, channel string) WatchFunc {
	return func(ctx context.Context) (manifest.Digest, int64, error) {
		p, err := s.Channel(ctx, release, channel)
		if err != nil {
			return manifest.Digest{}, 0, err
		}
		return p.Digest, p.Generation, nil
	}
}

// Config configures an Agent.
type Config struct {
	// Checker runs the check; required.
	Checker Checker
	// Interval between checks; default 60 s. Each wait is drawn uniformly
	// from Interval·(1±Jitter), so that a fleet started at once spreads out.
	Interval time.Duration
	// Jitter is a fraction in [0, 1); default 0.2. A negative value means
	// none.
	Jitter float64
	// CheckTimeout bounds one check; default 2 minutes.
	CheckTimeout time.Duration
	// Watch, if set, is polled every WatchInterval (default 15 s); a new
	// digest or generation starts a check at once.
	Watch         WatchFunc
	WatchInterval time.Duration
	// Identity is the instance's identity, served in the status (see
	// Identify).
	Identity Identity
	// Version is lockstep's version, served in the status.
	Version string
	// Logger receives one line per check and watch error; default silent.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Agent re-runs a check and keeps the last result. It is safe for
// concurrent use; its HTTP endpoints are [Agent.Handler].
type Agent struct {
	cfg     Config
	started time.Time
	metrics *metrics
	trigger chan struct{}

	mu     sync.RWMutex
	status Status
	last   *Result
}

// New returns an Agent for cfg, defaults filled in. It does not start
// checking: call Run.
func New(cfg Config) *Agent {
	if cfg.Interval <= 0 {
		cfg.Interval = 60 * time.Second
	}
	if cfg.Jitter == 0 {
		cfg.Jitter = 0.2
	}
	if cfg.Jitter < 0 {
		cfg.Jitter = 0
	}
	cfg.Jitter = min(cfg.Jitter, 0.99)
	if cfg.CheckTimeout <= 0 {
		cfg.CheckTimeout = 2 * time.Minute
	}
	if cfg.WatchInterval <= 0 {
		cfg.WatchInterval = 15 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Agent{cfg: cfg, started: cfg.Now().UTC(), metrics: newMetrics(), trigger: make(chan struct{}, 1)}
	a.status = Status{
		APIVersion: StatusAPIVersion,
		Kind:       StatusKind,
		Instance:   cfg.Identity,
		State:      StatePending,
		Agent:      AgentInfo{Version: cfg.Version, StartedAt: a.started, IntervalSeconds: cfg.Interval.Seconds()},
	}
	return a
}

// Run checks at once, then on every interval (with jitter) and whenever the
// watched channel moves, until ctx is done. It returns ctx's error.
func (a *Agent) Run(ctx context.Context) error {
	if a.cfg.Watch != nil {
		go a.watch(ctx)
	}
	for {
		a.CheckNow(ctx)
		t := time.NewTimer(a.wait())
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		case <-a.trigger:
			t.Stop()
		}
	}
}

// Trigger asks Run to check now; triggers while a check runs coalesce.
func (a *Agent) Trigger() {
	select {
	case a.trigger <- struct{}{}:
	default:
	}
}

// wait draws the next interval from Interval·(1±Jitter).
func (a *Agent) wait() time.Duration {
	j := a.cfg.Jitter * (2*rand.Float64() - 1)
	return time.Duration(float64(a.cfg.Interval) * (1 + j))
}

func (a *Agent) watch(ctx context.Context) {
	var seen manifest.Digest
	var seenGen int64
	first := true
	t := time.NewTicker(a.cfg.WatchInterval)
	defer t.Stop()
	for {
		wctx, cancel := context.WithTimeout(ctx, a.cfg.WatchInterval)
		d, gen, err := a.cfg.Watch(wctx)
		cancel()
		switch {
		case err != nil:
			if ctx.Err() == nil {
				a.cfg.Logger.Warn("reading the channel", "err", err)
			}
		case first:
			seen, seenGen, first = d, gen, false
		case d != seen || gen != seenGen:
			a.cfg.Logger.Info("channel moved", "from", seenGen, "to", gen, "digest", d.String())
			seen, seenGen = d, gen
			a.Trigger()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckNow runs one check (bounded by Config.CheckTimeout) and records it.
// A panic in the checker is a refusal.
func (a *Agent) CheckNow(ctx context.Context) Result {
	cctx, cancel := context.WithTimeout(ctx, a.cfg.CheckTimeout)
	defer cancel()
	start := a.cfg.Now()
	r := a.safeCheck(cctx)
	elapsed := a.cfg.Now().Sub(start)
	if r.Decision.At.IsZero() {
		r.Decision.At = a.cfg.Now().UTC()
	}
	a.record(r, elapsed)
	a.cfg.Logger.Info("checked", "state", stateOf(r.Decision), "findings", len(r.Decision.Findings), "seconds", elapsed.Seconds())
	return r
}

func (a *Agent) safeCheck(ctx context.Context) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = Result{Decision: admission.Decision{
				Allowed:    false,
				Unverified: true,
				Findings: []admission.Finding{{
					Kind: admission.KindDependencyUnreachable, Severity: admission.Refuse,
					Subject: "agent", Message: "the check panicked; refusing",
				}},
			}}
		}
	}()
	return a.cfg.Checker.Check(ctx)
}

func stateOf(d admission.Decision) string {
	switch {
	case d.Allowed:
		return StateAdmitted
	case d.Unverified:
		return StateUnverified
	}
	return StateRefused
}

func (a *Agent) record(r Result, elapsed time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &a.status
	dec := r.Decision
	if dec.Findings == nil {
		dec.Findings = []admission.Finding{}
	}
	at := dec.At
	s.State = stateOf(dec)
	s.Decision = &dec
	s.CheckedAt = &at
	s.CheckSeconds = elapsed.Seconds()
	s.Checks++
	s.Image, s.Platform = r.Image, r.Platform
	s.Running = nil
	if !r.Running.IsZero() {
		s.Running = &Running{Digest: r.Running, Source: r.RunningSource}
	}
	s.Manifest, s.Assets = nil, nil
	if r.Manifest != nil && r.Manifest.Manifest != nil {
		m := r.Manifest.Manifest
		s.Manifest = &ManifestRef{
			Release: m.Release.Name, Generation: m.Release.Generation,
			Digest: r.Manifest.Digest, Fingerprint: m.Assets.Fingerprint, Location: r.Manifest.Location,
		}
		if r.Probed {
			as := Assets(m, r.Served)
			s.Assets = &as
		}
	}
	s.Certificates = r.Certificates
	a.last = &r
	a.metrics.observe(r, s, elapsed, a.cfg.Now())
}

// Status returns the current status document.
func (a *Agent) Status() Status {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.status
}

// Admitted reports whether the last check admitted the instance (false
// before the first check).
func (a *Agent) Admitted() bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.status.State == StateAdmitted
}
