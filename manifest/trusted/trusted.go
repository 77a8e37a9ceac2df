package trusted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/flock"
	"github.com/lockstep-dev/lockstep/internal/regfile"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultDir is where the state lives unless told (--state-dir).
const DefaultDir = "/var/lib/lockstep"

// The kinds of refusal, as admission.Finding kinds.
const (
	KindRollback = "manifest-rollback"
	KindExpired  = "manifest-expired"
	// KindWrongRelease: the source served a manifest of another release
	// than the one the consumer follows (manifest.CheckRelease).
	KindWrongRelease = "manifest-wrong-release"
)

// RefusalError refuses a manifest: a rollback below an accepted generation,
// an expired manifest, or one of another release. It wraps a
// *manifest.GenerationError (rollback), a *verdict.MismatchError (expiry) or
// a *manifest.WrongReleaseError (another release), so that the CLI exits 1. Consumers map Kind to their
// own finding kinds (admission does).
type RefusalError struct {
	// Kind is KindRollback, KindExpired or KindWrongRelease.
	Kind    string
	Release string
	Err     error
}

func (e *RefusalError) Error() string { return e.Kind + ": " + e.Err.Error() }

func (e *RefusalError) Unwrap() error { return e.Err }

// Record is what the state holds for one release.
type Record struct {
	Release    string          `json:"release"`
	Generation int64           `json:"generation"`
	Digest     manifest.Digest `json:"digest"`
	// AcceptedAt is when Accept last stored or confirmed this manifest.
	AcceptedAt time.Time `json:"acceptedAt"`
}

// State is a consumer's trusted state in a directory. It is safe for
// concurrent use by goroutines and processes.
type State struct {
	dir string
	now func() time.Time
}

// Option configures a State.
type Option func(*State)

// WithClock sets the clock (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *State) { s.now = now } }

// Open returns the state in dir (DefaultDir if ""). It creates nothing:
// the first Accept makes the directory (0700).
func Open(dir string, opts ...Option) (*State, error) {
	if dir == "" {
		dir = DefaultDir
	}
	s := &State{dir: dir, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Writable reports whether the state could be written, creating nothing:
// the directory, or the nearest ancestor that exists, must be writable and
// searchable by this process. A refusal is an *fs.PathError that
// errors.Is(err, fs.ErrPermission) recognises, so that a consumer can say
// at its start, before checking anything, what its first acceptance would
// later fail on.
func (s *State) Writable() error {
	p := s.dir
	for {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return &fs.PathError{Op: "open", Path: p, Err: syscall.ENOTDIR}
		case err == nil:
			if err := syscall.Access(p, 0x2|0x1); err != nil { // W_OK|X_OK
				return &fs.PathError{Op: "write", Path: p, Err: err}
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return err
		}
		p = parent
	}
}

// Dir returns the state's directory.
func (s *State) Dir() string { return s.dir }

func (s *State) path(release, suffix string) (string, error) {
	if err := manifest.ValidateName(release); err != nil {
		return "", fmt.Errorf("release name: %w", err)
	}
	return filepath.Join(s.dir, release+suffix), nil
}

// Get returns the record of release; ok is false when nothing was accepted
// yet. A damaged record is an error, never a reset.
func (s *State) Get(release string) (rec Record, ok bool, err error) {
	p, err := s.path(release, ".state.json")
	if err != nil {
		return Record{}, false, err
	}
	b, err := regfile.ReadNoFollow(p, manifest.MaxPointerSize)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("reading trusted state: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil || rec.Release != release || rec.Generation < 1 {
		return Record{}, false, fmt.Errorf("trusted state %s is damaged (remove it only if you know why): %v", p, err)
	}
	return rec, true, nil
}

// Check refuses m if its generation is below the highest accepted for its
// release (or equal to it with other content), or if it has expired. It
// returns a *RefusalError, or another error if the state cannot be read
// (or ctx is done). With Accept, it makes *State an
// admission.GenerationGuard: the one place rollback protection is
// enforced.
func (s *State) Check(ctx context.Context, m *manifest.Signed) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	release := m.Manifest.Release.Name
	if m.Manifest.Expired(s.now()) {
		return &RefusalError{Kind: KindExpired, Release: release, Err: &verdict.MismatchError{
			Subject: "manifest " + m.Manifest.ID(), Reason: "expired",
			Got: m.Manifest.Release.ExpiresAt.UTC().Format(time.RFC3339), Want: "an expiry after " + s.now().UTC().Format(time.RFC3339),
		}}
	}
	rec, ok, err := s.Get(release)
	if err != nil || !ok {
		return err
	}
	g := m.Manifest.Release.Generation
	if g < rec.Generation || (g == rec.Generation && m.Digest != rec.Digest) {
		return &RefusalError{Kind: KindRollback, Release: release, Err: &manifest.GenerationError{
			Release: release, Have: rec.Generation, Offered: g, HaveDigest: rec.Digest, OfferedDigest: m.Digest,
		}}
	}
	return nil
}

// Accept records m as accepted for its release, after the caller's checks
// have all passed: the generation rises (or stays, for the same manifest)
// and a copy of m is cached for MaxAge fallbacks, with the time of
// acceptance. It checks again under the lock, so a concurrent Accept of a
// higher generation is never undone (a *RefusalError). Accepting the
// cached copy itself (m.CachedAt set, served by Source while the store
// was unreachable) records nothing: the cache does not get fresher for
// being used, so MaxAge keeps counting from when the store last served it.
func (s *State) Accept(ctx context.Context, m *manifest.Signed) error {
	release := m.Manifest.Release.Name
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.Check(ctx, m); err != nil {
		return err
	}
	if !m.CachedAt.IsZero() {
		if rec, ok, err := s.Get(release); err != nil || (ok && rec.Digest == m.Digest) {
			return err
		}
	}
	base, err := s.path(release, ".manifest")
	if err != nil {
		return err
	}
	// The cached copy first; the record is the commit point, and Cached
	// checks the copy against it. Every file is fsynced, then renamed, the
	// record last, then the directory is fsynced once (atomicfile.WriteAll):
	// a crash between the renames leaves a copy that does not match the
	// record, which Cached treats as none (no fallback: fail closed). A
	// copy that already holds m's bytes (the same release accepted again)
	// is not written again.
	var files []atomicfile.File
	for _, f := range []struct {
		ext  string
		data []byte
	}{{".json", m.Raw}, {manifest.SignatureSuffix, m.Signature}, {manifest.BundleSuffix, m.Bundle}} {
		if f.ext != ".json" && len(f.data) == 0 {
			if err := os.Remove(base + f.ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("writing trusted state: %w", err)
			}
			continue
		}
		if same(base+f.ext, f.data) {
			continue
		}
		files = append(files, atomicfile.File{Name: filepath.Base(base + f.ext), Data: f.data, Perm: 0o600})
	}
	rec := Record{Release: release, Generation: m.Manifest.Release.Generation, Digest: m.Digest, AcceptedAt: s.now().UTC()}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	p, _ := s.path(release, ".state.json")
	files = append(files, atomicfile.File{Name: filepath.Base(p), Data: append(b, '\n'), Perm: 0o600})
	if err := atomicfile.WriteAll(s.dir, files...); err != nil {
		return fmt.Errorf("writing trusted state: %w", err)
	}
	return nil
}

// same reports whether the regular file at p holds exactly data (read
// without following a link, as Cached reads it).
func same(p string, data []byte) bool {
	b, err := regfile.ReadNoFollow(p, int64(len(data))+1)
	return err == nil && bytes.Equal(b, data)
}

// Cached returns the manifest last accepted for release and when, or
// ok false when there is none (or its copy does not match the record).
func (s *State) Cached(release string) (m *manifest.Signed, at time.Time, ok bool, err error) {
	rec, ok, err := s.Get(release)
	if err != nil || !ok {
		return nil, time.Time{}, false, err
	}
	base, _ := s.path(release, ".manifest")
	raw, err := regfile.ReadNoFollow(base+".json", manifest.MaxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("reading trusted state: %w", err)
	}
	m, err = manifest.CheckStored(raw, base+".json", release, rec.Digest)
	if err != nil {
		return nil, time.Time{}, false, nil
	}
	if m.Signature, err = readOptional(base + manifest.SignatureSuffix); err != nil {
		return nil, time.Time{}, false, err
	}
	if m.Bundle, err = readOptional(base + manifest.BundleSuffix); err != nil {
		return nil, time.Time{}, false, err
	}
	return m, rec.AcceptedAt, true, nil
}

func readOptional(p string) ([]byte, error) {
	b, err := manifest.ReadSidecar(p, regfile.ReadNoFollow)
	if err != nil {
		return nil, fmt.Errorf("reading trusted state: %w", err)
	}
	return b, nil
}

// lock takes the state's lock, creating the state's directory: the first
// write makes it, so that a consumer that only reads (a dry run, a
// refusal) leaves none behind.
func (s *State) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening trusted state: %w", err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(s.dir, ".lock"), 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking trusted state: %w", err)
	}
	return unlock, nil
}

// Source is a manifest.Source that, with MaxAge, falls back to the trusted
// state's cached copy when Upstream cannot be reached. It neither refuses
// rollbacks nor Accepts: the consumer's guard does both (State.Check
// before trusting a manifest, State.Accept once every check has passed;
// admission.Check calls them), so that rollback protection has one place.
type Source struct {
	Upstream manifest.Source
	State    *State
	// Release is the release the consumer follows; "" takes the fetched
	// manifest's (and then there is no fallback).
	Release string
	// MaxAge bounds how long ago the cached copy was last accepted for it
	// to stand in for an unreachable store; 0 (the default) means never.
	MaxAge time.Duration
	Logger *slog.Logger
}

var _ manifest.Source = (*Source)(nil)

// Check is State.Check of the State s falls back to. With Accept, it makes
// a *Source an admission.GenerationGuard too, so that a consumer hands
// admission.Check the one Source, not its State a second time.
func (s *Source) Check(ctx context.Context, m *manifest.Signed) error { return s.State.Check(ctx, m) }

// Accept is State.Accept of the State s falls back to.
func (s *Source) Accept(ctx context.Context, m *manifest.Signed) error { return s.State.Accept(ctx, m) }

// Fetch returns Upstream's manifest, or the cached one as said above (with
// CachedAt set to when it was last accepted from the store, and Location
// naming the cache). A manifest of another release than Release is a
// *RefusalError (KindWrongRelease) wrapping a *manifest.WrongReleaseError. When there is nothing usable it returns
// Upstream's error (a *verdict.UnavailableError when unreachable, also when
// the cache is older than MaxAge).
func (s *Source) Fetch(ctx context.Context) (*manifest.Signed, error) {
	m, err := s.Upstream.Fetch(ctx)
	if err != nil {
		if !verdict.IsUnavailable(err) || s.MaxAge <= 0 || s.Release == "" {
			return nil, err
		}
		cached, at, ok, cerr := s.State.Cached(s.Release)
		if cerr != nil || !ok {
			return nil, err
		}
		age := s.State.now().Sub(at)
		if age > s.MaxAge {
			return nil, fmt.Errorf("the cached manifest was accepted %s ago, over the maximum age of %s: %w", age.Round(time.Second), s.MaxAge, err)
		}
		if s.Logger != nil {
			s.Logger.Warn("store unreachable; using the cached manifest", "release", s.Release, "generation", cached.Manifest.Release.Generation, "age", age.Round(time.Second), "err", err)
		}
		cached.Location = "trusted cache (" + s.State.dir + "), accepted " + at.UTC().Format(time.RFC3339)
		cached.CachedAt = at
		m = cached
	}
	release := s.Release
	if release == "" {
		release = m.Manifest.Release.Name
	}
	if err := manifest.CheckRelease(m, release); err != nil {
		return nil, &RefusalError{Kind: KindWrongRelease, Release: release, Err: err}
	}
	return m, nil
}
