package agent

import (
	"context"
	"sync"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// Admission returns the Checker that runs the boot gate's check,
// admission.Check with cfg, every time. The manifest each check fetched is
// kept (its source is wrapped) so that the status can describe the served
// assets against it; the certificates come from cfg.Client, which is given
// the default policy when nil.
func Admission(cfg admission.Config) Checker {
	if cfg.Client == nil {
		cfg.Client = transport.New(transport.DefaultPolicy())
	}
	return admissionChecker{cfg: cfg}
}

type admissionChecker struct{ cfg admission.Config }

func (a admissionChecker) Check(ctx context.Context) Result {
	cfg := a.cfg
	src := &recordingSource{upstream: cfg.Source}
	if cfg.Source != nil {
		cfg.Source = src
	}
	d := admission.Check(ctx, cfg)
	r := Result{
		Decision: d, Image: d.Image, Platform: d.Platform, Running: d.RunningDigest,
		Probed: len(cfg.Probes) > 0, Served: d.Served, Certificates: cfg.Client.Certificates(),
	}
	if d.Running != nil {
		r.RunningSource = d.Running.Source
	}
	if m := src.last(); m != nil && !d.ManifestDigest.IsZero() && m.Digest == d.ManifestDigest {
		r.Manifest = m
	}
	return r
}

// recordingSource remembers the manifest its upstream returned. The check
// may give up on a fetch that is still running, hence the lock.
type recordingSource struct {
	upstream manifest.Source
	mu       sync.Mutex
	got      *manifest.Signed
}

func (s *recordingSource) Fetch(ctx context.Context) (*manifest.Signed, error) {
	m, err := s.upstream.Fetch(ctx)
	if err == nil {
		s.mu.Lock()
		s.got = m
		s.mu.Unlock()
	}
	return m, err
}

func (s *recordingSource) last() *manifest.Signed {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}
