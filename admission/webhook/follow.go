package webhook

import (
	"github.com/lockstep-dev/lockstep/internal/imagename"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Manifests yields the manifest reviews are judged against.
type Manifests interface {
	// Manifest returns the current manifest, or nil before one is loaded.
	Manifest() *Accepted
}

// Fixed is a Manifests that always yields the same manifest.
type Fixed struct{ A *Accepted }

// Manifest returns f.A.
func (f Fixed) Manifest() *Accepted { return f.A }

// The results counted in lockstep_webhook_manifest_refreshes_total.
const (
	refreshLoaded    = "loaded"
	refreshUnchanged = "unchanged"
	refreshFetch     = "fetch"
	refreshInvalid   = "invalid"
	refreshSignature = "signature"
	refreshExpired   = "expired"
	refreshRollback  = "rollback"
	refreshRelease   = "release"
)

// FollowOptions configure a Follower.
type FollowOptions struct {
	// Verifier checks each fetched manifest's signature before it is used.
	// Required unless AllowUnsigned.
	Verifier manifest.Verifier
	// AllowUnsigned accepts manifests without a signature check when there
	// is no Verifier (--insecure-allow-unsigned); every load says so in the
	// log.
	AllowUnsigned bool
	// FetchTimeout bounds one fetch and verification (default 30s).
	FetchTimeout time.Duration
	// Logger gets one line per refused manifest and per new generation
	// (default: discard).
	Logger  *slog.Logger
	Metrics *Metrics
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Names normalises repository names, with the registry aliases the
	// operator declared (AcceptNames).
	Names imagename.Names
}

// Follower keeps the last good manifest of a source: fetched, verified,
// not expired, and of a generation no lower than the one it holds. A
// manifest that fails any check never replaces a good one. It is safe for
// concurrent use; Manifest is lock-free.
type Follower struct {
	src manifest.Source
	o   FollowOptions
	mu  sync.Mutex // serialises Refresh
	cur atomic.Pointer[Accepted]
}

// NewFollower returns a Follower of src. It returns an error when there is
// no Verifier and AllowUnsigned is false. It loads nothing: call Refresh or
// Run.
func NewFollower(src manifest.Source, o FollowOptions) (*Follower, error) {
	if src == nil {
		return nil, errors.New("no manifest source")
	}
	if o.Verifier == nil && !o.AllowUnsigned {
		return nil, errors.New("no manifest verifier: give one, or allow unsigned manifests explicitly")
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Follower{src: src, o: o}, nil
}

// Manifest returns the current manifest, or nil before one is loaded.
func (f *Follower) Manifest() *Accepted { return f.cur.Load() }

// RefusedError says why a fetched manifest was not used; the current one,
// if any, is kept. Its cause is a *manifest.ValidationError, a
// *manifest.GenerationError, the verifier's error or the source's.
type RefusedError struct {
	// Result is the metric label: fetch, invalid, signature, expired,
	// rollback or release.
	Result string
	Err    error
}

func (e *RefusedError) Error() string { return "manifest refused (" + e.Result + "): " + e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Refresh fetches the manifest once and, if it is good, makes it current.
// A good manifest has a valid signature (or AllowUnsigned without a
// Verifier), has not expired, names the same release as the current one,
// and a generation no lower; the same generation must be the same
// document. It returns the current manifest and, for a refused one, a
// *RefusedError.
func (f *Follower) Refresh(ctx context.Context) (*Accepted, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.cur.Load()
	a, result, err := f.fetch(ctx, cur)
	if err != nil {
		f.o.Metrics.refresh(result, cur)
		f.o.Logger.Error("manifest refused, keeping the current one", "result", result, "err", err, "current", idOf(cur))
		return cur, &RefusedError{Result: result, Err: err}
	}
	if cur != nil && a.Signed.Digest == cur.Signed.Digest {
		fresh := *cur // the same document: keep its index and verdicts
		fresh.Signed, fresh.At = a.Signed, a.At
		f.cur.Store(&fresh)
		f.o.Metrics.refresh(refreshUnchanged, &fresh)
		return &fresh, nil
	}
	if cur != nil {
		have, got := cur.Signed.Manifest.Release, a.Signed.Manifest.Release
		switch {
		case got.Name != have.Name:
			err = fmt.Errorf("release %q is not the release %q this webhook follows", got.Name, have.Name)
			result = refreshRelease
		case got.Generation <= have.Generation:
			err = &manifest.GenerationError{Release: got.Name, Channel: a.Signed.Location, Have: have.Generation, Offered: got.Generation}
			result = refreshRollback
		}
		if err != nil {
			f.o.Metrics.refresh(result, cur)
			f.o.Logger.Error("manifest refused, keeping the current one", "result", result, "err", err, "current", idOf(cur))
			return cur, &RefusedError{Result: result, Err: err}
		}
	}
	f.cur.Store(a)
	f.o.Metrics.refresh(refreshLoaded, a)
	lvl := slog.LevelInfo
	if a.Unsigned {
		lvl = slog.LevelWarn
	}
	f.o.Logger.Log(ctx, lvl, "manifest loaded", "release", a.ID(), "digest", a.Signed.Digest.String(),
		"location", a.Signed.Location, "previous", idOf(cur), "unsigned", a.Unsigned)
	return a, nil
}

// fetch fetches, verifies and indexes one manifest, returning the metric
// result for a failure. The same bytes with the same signature material
// as the current manifest are not verified again.
func (f *Follower) fetch(ctx context.Context, cur *Accepted) (*Accepted, string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.o.FetchTimeout)
	defer cancel()
	s, err := f.src.Fetch(ctx)
	if err != nil {
		var ve *manifest.ValidationError
		var ge *manifest.GenerationError
		switch {
		case errors.As(err, &ve):
			return nil, refreshInvalid, err
		case errors.As(err, &ge): // a source that keeps trusted state refused it
			return nil, refreshRollback, err
		}
		return nil, refreshFetch, fmt.Errorf("fetching the manifest: %w", err)
	}
	if f.o.Verifier != nil && !sameSigned(s, cur) {
		if err := f.o.Verifier.Verify(ctx, s); err != nil {
			return nil, refreshSignature, fmt.Errorf("verifying %s (%s): %w", s.Manifest.ID(), s.Location, err)
		}
	}
	now := f.o.Now()
	if s.Manifest.Expired(now) {
		return nil, refreshExpired, fmt.Errorf("%s expired at %s", s.Manifest.ID(), s.Manifest.Release.ExpiresAt.Format(time.RFC3339))
	}
	a, err := AcceptNames(s, f.o.Verifier == nil, now, f.o.Names)
	if err != nil {
		return nil, refreshInvalid, err
	}
	return a, "", nil
}

// sameSigned reports whether s is byte for byte the current manifest, with
// the same signature and bundle.
func sameSigned(s *manifest.Signed, cur *Accepted) bool {
	if cur == nil {
		return false
	}
	c := cur.Signed
	return bytes.Equal(s.Raw, c.Raw) && bytes.Equal(s.Signature, c.Signature) && bytes.Equal(s.Bundle, c.Bundle)
}

// Run refreshes until ctx is done: every interval (±10% jitter, so that
// replicas do not fetch in step), and, until a first manifest is loaded,
// sooner (from one second, doubling up to interval). It returns when ctx
// is done.
func (f *Follower) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 30 * time.Second
	}
	retry := min(time.Second, interval)
	for {
		a, _ := f.Refresh(ctx)
		wait := jitter(interval)
		if a == nil {
			wait, retry = retry, min(2*retry, interval)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// jitter returns d ±10%.
func jitter(d time.Duration) time.Duration {
	return d - d/10 + rand.N(d/5+1)
}

func idOf(a *Accepted) string {
	if a == nil {
		return "none"
	}
	return a.ID()
}
