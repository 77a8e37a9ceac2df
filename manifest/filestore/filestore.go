package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/flock"
	"github.com/lockstep-dev/lockstep/internal/regfile"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/blobstore"
)

// Store is a manifest.Store in a directory. It is safe for concurrent use,
// by goroutines and by processes.
type Store struct {
	dir string
	log *slog.Logger
	now func() time.Time
}

var _ manifest.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithLogger sets the logger (default: none).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock sets the clock that stamps pointer moves (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns the store in dir. It creates nothing: the directories are
// made by the first Put or Move, so that reading a store (status, admit,
// fleet check) never leaves a directory behind, and a store that is not
// there reads as empty.
func New(dir string, opts ...Option) (*Store, error) {
	if dir == "" {
		return nil, errors.New("filestore: no directory")
	}
	s := &Store{dir: dir, log: slog.New(slog.DiscardHandler), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// fileMode is the mode of every file the store writes: manifests, their
// signatures and bundles, and pointers.
const fileMode = 0o644

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) String() string { return "file://" + s.dir }

func (s *Store) releaseDir(release string) (string, error) {
	if err := manifest.ValidateName(release); err != nil {
		return "", fmt.Errorf("release name: %w", err)
	}
	return filepath.Join(s.dir, release), nil
}

func (s *Store) manifestPath(release string, d manifest.Digest) (string, error) {
	rd, err := s.releaseDir(release)
	if err != nil {
		return "", err
	}
	if _, err := manifest.ParseDigest(d.String()); err != nil {
		return "", err
	}
	return filepath.Join(rd, "manifests", d.String()+".json"), nil
}

func (s *Store) channelPath(release, channel string) (string, error) {
	rd, err := s.releaseDir(release)
	if err != nil {
		return "", err
	}
	if err := manifest.ValidateName(channel); err != nil {
		return "", fmt.Errorf("channel name: %w", err)
	}
	return filepath.Join(rd, "channels", channel+".json"), nil
}

// Put stores s under its digest (blobstore.Put). See manifest.Store.
// It first sweeps the release's temporary files that a killed writer left
// (Sweep).
func (s *Store) Put(ctx context.Context, m *manifest.Signed) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m != nil && m.Manifest != nil {
		if _, err := s.Sweep(ctx, m.Manifest.Release.Name); err != nil {
			s.log.Warn("sweeping temporary files", "err", err)
		}
	}
	return blobstore.Put(ctx, blobs{s}, m, s.log)
}

// Sweep removes the temporary files (.NAME.tmp-*) of release's manifests
// and channels whose writer is gone: a publish killed with SIGKILL
// leaves one, and the next Put or gc takes it (atomicfile.Sweep: a file
// whose writer still holds its lock stays). It returns the paths removed.
func (s *Store) Sweep(ctx context.Context, release string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rd, err := s.releaseDir(release)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, sub := range []string{"manifests", "channels"} {
		names, err := atomicfile.Sweep(filepath.Join(rd, sub))
		if err != nil {
			return out, err
		}
		for _, n := range names {
			out = append(out, filepath.Join(rd, sub, n))
			s.log.Info("removed a temporary file a killed writer left", "path", filepath.Join(rd, sub, n))
		}
	}
	return out, nil
}

// blobs is the store's files as blobstore.Blobs: a blob's name is its path.
type blobs struct{ s *Store }

func (b blobs) Name(release string, d manifest.Digest) (string, error) {
	return b.s.manifestPath(release, d)
}

// Create writes a file once (createOnce), making its directory.
func (b blobs) Create(_ context.Context, path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return createOnce(path, data)
}

// Replace writes a file atomically (atomicfile), making its directory.
func (b blobs) Replace(_ context.Context, path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, fileMode)
}

// Delete removes a file; one that is not there is not an error.
func (b blobs) Delete(_ context.Context, path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting %s: %w", strings.TrimSuffix(filepath.Base(path), ".json"), err)
	}
	return nil
}

func (b blobs) Stored(ctx context.Context, release string, d manifest.Digest) (*manifest.Signed, error) {
	return b.s.Get(ctx, release, d)
}

func (b blobs) List(ctx context.Context, release, dir string) ([]string, error) {
	return b.s.names(ctx, release, dir)
}

// createOnce writes data to path unless path exists, atomically: a
// complete, fsynced temporary file is hard-linked to path, which fails if
// path is there (first writer wins), then the directory is fsynced.
func createOnce(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := atomicfile.CreateTemp(dir, filepath.Base(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	defer f.Close() // holds the lock through the link (atomicfile.Sweep)
	// The same mode as the sidecars and pointers atomicfile writes.
	if _, err = f.Write(data); err == nil {
		err = f.Chmod(fileMode)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Get reads a manifest. See manifest.Store.
func (s *Store) Get(ctx context.Context, release string, d manifest.Digest) (*manifest.Signed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := s.manifestPath(release, d)
	if err != nil {
		return nil, err
	}
	raw, err := regfile.ReadNoFollow(path, manifest.MaxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("manifest %s of release %s: %w", d, release, manifest.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading manifest %s: %w", d, err)
	}
	loc := filepath.ToSlash(filepath.Join(release, "manifests", d.String()+".json"))
	signed, err := manifest.CheckStored(raw, loc, release, d)
	if err != nil {
		return nil, err
	}
	signed.Location = s.String() + "/" + loc
	base := strings.TrimSuffix(path, ".json")
	if signed.Signature, err = manifest.ReadSidecar(base+manifest.SignatureSuffix, regfile.ReadNoFollow); err != nil {
		return nil, fmt.Errorf("reading the signature of %s: %w", d, err)
	}
	if signed.Bundle, err = manifest.ReadSidecar(base+manifest.BundleSuffix, regfile.ReadNoFollow); err != nil {
		return nil, fmt.Errorf("reading the bundle of %s: %w", d, err)
	}
	return signed, nil
}

// Channel reads a channel's pointer. See manifest.Store.
func (s *Store) Channel(ctx context.Context, release, channel string) (*manifest.Pointer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := s.channelPath(release, channel)
	if err != nil {
		return nil, err
	}
	return readPointer(path, release, channel)
}

func readPointer(path, release, channel string) (*manifest.Pointer, error) {
	raw, err := regfile.ReadNoFollow(path, manifest.MaxPointerSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("channel %s of release %s: %w", channel, release, manifest.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading channel %s: %w", channel, err)
	}
	return manifest.ParsePointer(raw, release+"/channels/"+channel+".json", release, channel)
}

// Move points a channel at a stored manifest, under the release's lock.
// See manifest.Store.
func (s *Store) Move(ctx context.Context, channel string, m *manifest.Signed, by string) (*manifest.Pointer, error) {
	if m == nil || m.Manifest == nil {
		return nil, errors.New("moving a channel: no manifest")
	}
	release := m.Manifest.Release.Name
	path, err := s.channelPath(release, channel)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lock(ctx, release)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, err := readPointer(path, release, channel)
	next, err := blobstore.NextPointer(cur, err, channel, m, by, s.now())
	if err != nil {
		return nil, err
	}
	// Under the lock, Delete cannot take the manifest between this check
	// and the write.
	if _, err := s.Get(ctx, release, m.Digest); err != nil {
		return nil, fmt.Errorf("moving channel %s: %w", channel, err)
	}
	data, err := next.Encode()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("moving channel %s: %w", channel, err)
	}
	if err := atomicfile.Write(path, data, fileMode); err != nil {
		return nil, fmt.Errorf("moving channel %s: %w", channel, err)
	}
	s.log.Debug("moved channel", "release", release, "channel", channel, "generation", next.Generation, "digest", next.Digest)
	return next, nil
}

// List returns a release's stored manifests, sorted. See manifest.Store.
func (s *Store) List(ctx context.Context, release string) ([]manifest.Digest, error) {
	return blobstore.List(ctx, blobs{s}, release)
}

// Channels returns a release's channel names, sorted. See manifest.Store.
func (s *Store) Channels(ctx context.Context, release string) ([]string, error) {
	return blobstore.Channels(ctx, blobs{s}, release)
}

// Releases returns the release directories, sorted. See manifest.Store.
// A symbolic link where a release directory would be is a
// *manifest.CorruptError: readers would follow it, and a lister that
// skipped it would miss what they read.
func (s *Store) Releases(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing releases of %s: %w", s, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || manifest.ValidateName(e.Name()) != nil {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			return nil, &manifest.CorruptError{Location: e.Name(), Reason: "a symbolic link where a release directory would be"}
		}
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// names lists the "*.json" files of a release's subdirectory, without the
// extension.
func (s *Store) names(ctx context.Context, release, sub string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rd, err := s.releaseDir(release)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(rd, sub))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s of release %s: %w", sub, release, err)
	}
	var out []string
	for _, e := range entries {
		n, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(n, ".") {
			continue
		}
		if !e.Type().IsRegular() {
			// Every command reads a store's files without following links
			// (regfile.ReadNoFollow): an entry that is not a regular file
			// is not skipped, so that gc cannot miss a channel that a
			// reader sees, or delete a manifest that it names.
			return nil, &manifest.CorruptError{
				Location: release + "/" + sub + "/" + e.Name(),
				Reason:   "not a regular file (" + e.Type().String() + "); a store holds no links, directories or devices there",
			}
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// Delete removes a manifest and its signature and bundle, under the
// release's lock. Deleting a manifest that is not there is not an error.
func (s *Store) Delete(ctx context.Context, release string, d manifest.Digest) error {
	if _, err := s.manifestPath(release, d); err != nil {
		return err
	}
	unlock, err := s.lock(ctx, release)
	if err != nil {
		return err
	}
	defer unlock()
	return blobstore.Delete(ctx, blobs{s}, release, d, s.log)
}

// lock takes the release's exclusive lock (flock on DIR/RELEASE/.lock),
// polling so that ctx can cancel the wait.
func (s *Store) lock(ctx context.Context, release string) (func(), error) {
	rd, err := s.releaseDir(release)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(rd, 0o755); err != nil {
		return nil, fmt.Errorf("locking release %s: %w", release, err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(rd, ".lock"), fileMode)
	if err != nil {
		return nil, fmt.Errorf("locking release %s: %w", release, err)
	}
	return unlock, nil
}
