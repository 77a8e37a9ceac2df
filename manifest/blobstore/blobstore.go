package blobstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Blobs is what a store gives Put and Delete: named blobs on its medium,
// and its own reading of a stored manifest. A manifest's blob is named
// "….json"; its sidecars are that name without ".json" plus the sidecar's
// suffix (manifest.SignatureSuffix, manifest.BundleSuffix).
type Blobs interface {
	// Name is the name of the blob of manifest d of release; it returns an
	// error for a release name or digest the store cannot hold.
	Name(release string, d manifest.Digest) (string, error)
	// Create stores data as name unless a blob of that name is there, in
	// one step that a concurrent Create cannot split: the first writer
	// wins. When one is there it returns an error that wraps fs.ErrExist.
	Create(ctx context.Context, name string, data []byte) error
	// Replace stores data as name, replacing a blob there; a reader sees
	// the old bytes or the new, never a part.
	Replace(ctx context.Context, name string, data []byte) error
	// Delete removes the blob name; one that is not there is not an error.
	Delete(ctx context.Context, name string) error
	// List returns the names, without ".json", of the "*.json" blobs
	// directly in dir ("manifests" or "channels") of release, sorted; none
	// when there are none.
	List(ctx context.Context, release, dir string) ([]string, error)
	// Stored reads and checks the manifest d of release as the store reads
	// it; manifest.ErrNotFound when there is none.
	Stored(ctx context.Context, release string, d manifest.Digest) (*manifest.Signed, error)
}

// Put stores m as its blob (Blobs.Name), then its sidecars. See manifest.Store:
// a manifest that is there already is never rewritten. With the same
// bytes, the sidecars it lacks are added and those it has are kept; with
// other bytes (the same manifest formatted differently) nothing is written,
// and a warning is logged when m carried a signature or a bundle.
//
// Put checks m.CheckSidecars first, and returns Stored's errors (a corrupt
// stored manifest among them) as they are.
func Put(ctx context.Context, b Blobs, m *manifest.Signed, log *slog.Logger) error {
	if m == nil || m.Manifest == nil {
		return errors.New("putting a manifest: no manifest")
	}
	if err := m.CheckSidecars(); err != nil {
		return err
	}
	release := m.Manifest.Release.Name
	name, err := b.Name(release, m.Digest)
	if err != nil {
		return err
	}
	existing, err := b.Stored(ctx, release, m.Digest)
	if errors.Is(err, manifest.ErrNotFound) {
		err = b.Create(ctx, name, m.Raw)
		if err == nil {
			// Ours: then its sidecars, replacing any that an interrupted
			// Delete left.
			log.Debug("stored manifest", "release", release, "digest", m.Digest)
			return putSidecars(ctx, b, name, m, true)
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("putting %s: %w", m.Digest, err)
		}
		// A concurrent Put won: check what it stored.
		existing, err = b.Stored(ctx, release, m.Digest)
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(existing.Raw, m.Raw) {
		// The stored bytes (and the signature over them) stay.
		if len(m.Signature) > 0 || len(m.Bundle) > 0 {
			log.Warn("manifest already stored with other bytes; keeping them and their signature, not this one", "release", release, "digest", m.Digest)
		}
		return nil
	}
	return putSidecars(ctx, b, name, m, false)
}

// putSidecars writes the signature and bundle of m beside name. With
// fresh (m was just stored) a sidecar there is replaced; otherwise one
// there is kept.
func putSidecars(ctx context.Context, b Blobs, name string, m *manifest.Signed, fresh bool) error {
	base := strings.TrimSuffix(name, ".json")
	for _, sc := range m.Sidecars() {
		if len(sc.Data) == 0 {
			continue
		}
		var err error
		if fresh {
			err = b.Replace(ctx, base+sc.Suffix, sc.Data)
		} else if err = b.Create(ctx, base+sc.Suffix, sc.Data); errors.Is(err, fs.ErrExist) {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("putting %s%s: %w", m.Digest, sc.Suffix, err)
		}
	}
	return nil
}

// Delete removes the blob of manifest d of release, then its sidecars.
// Blobs that are not there are not an error; the first failure is
// returned as Blobs.Delete gave it.
func Delete(ctx context.Context, b Blobs, release string, d manifest.Digest, log *slog.Logger) error {
	name, err := b.Name(release, d)
	if err != nil {
		return err
	}
	if err := b.Delete(ctx, name); err != nil {
		return err
	}
	base := strings.TrimSuffix(name, ".json")
	for _, suffix := range manifest.SidecarSuffixes {
		if err := b.Delete(ctx, base+suffix); err != nil {
			return err
		}
	}
	log.Debug("deleted manifest", "release", release, "digest", d)
	return nil
}

// List returns the digests of the manifests stored for release, sorted; a
// name that is not a digest is not the store's and is skipped.
func List(ctx context.Context, b Blobs, release string) ([]manifest.Digest, error) {
	names, err := b.List(ctx, release, "manifests")
	if err != nil {
		return nil, err
	}
	var out []manifest.Digest
	for _, n := range names {
		if d, err := manifest.ParseDigest(n); err == nil {
			out = append(out, d)
		}
	}
	return out, nil
}

// Channels returns the names of release's channels, sorted; a name that
// is not a valid channel name is skipped.
func Channels(ctx context.Context, b Blobs, release string) ([]string, error) {
	names, err := b.List(ctx, release, "channels")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if manifest.ValidateName(n) == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// NextPointer is manifest.NextPointer over a store's read of the channel
// (cur, readErr): a read that wraps manifest.ErrNotFound is a channel that
// does not exist yet; another read error is returned as it is.
func NextPointer(cur *manifest.Pointer, readErr error, channel string, m *manifest.Signed, by string, now time.Time) (*manifest.Pointer, error) {
	if errors.Is(readErr, manifest.ErrNotFound) {
		cur, readErr = nil, nil
	}
	if readErr != nil {
		return nil, readErr
	}
	return manifest.NextPointer(cur, channel, m, by, now)
}
