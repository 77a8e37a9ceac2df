package manifest

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Signed is a manifest as a consumer received it: the exact bytes, the
// parsed document, and the signature material found beside it.
type Signed struct {
	// Raw is the manifest document exactly as stored; signatures are over
	// these bytes.
	Raw      []byte
	Manifest *Manifest
	// Digest is Manifest.Digest().
	Digest Digest
	// Signature is the base64 cosign signature over Raw (MANIFEST.sig), if
	// one was found.
	Signature []byte
	// Bundle is a Sigstore bundle (JSON) for Raw, if one was found.
	Bundle []byte
	// Location says where the manifest came from, for reports.
	Location string
	// CachedAt is set only on a consumer's cached copy of a manifest it
	// accepted before, served because its source could not be reached
	// (trusted.Source with MaxAge): when it was last accepted from the
	// source.
	CachedAt time.Time
}

// NewSigned parses raw and returns it as a Signed with its digest.
func NewSigned(raw []byte, location string) (*Signed, error) {
	m, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	// Parse has validated m: its digest needs no second Validate.
	d, err := m.digest()
	if err != nil {
		return nil, err
	}
	return &Signed{Raw: raw, Manifest: m, Digest: d, Location: location}, nil
}

// Source yields the manifest a consumer must match: a file, a URL, or a
// channel of a Store. Fetch returns a *ValidationError for a document that
// is not a valid manifest, and another error, wrapping its cause, when the
// source could not be read.
type Source interface {
	Fetch(ctx context.Context) (*Signed, error)
}

// Verifier checks the signature of a manifest before any consumer trusts
// it. It returns nil only for a manifest that verifies.
type Verifier interface {
	Verify(ctx context.Context, s *Signed) error
}

// Store keeps immutable manifests by digest and one pointer per channel.
// Both backends (a directory, S3) pass the same contract tests.
type Store interface {
	// Put stores a manifest's bytes (and its signature and bundle, if any)
	// under its digest. Storing the same digest again never rewrites: it
	// checks that what is there is that manifest (a *CorruptError
	// otherwise) and adds only a signature or bundle that is missing.
	Put(ctx context.Context, s *Signed) error
	// Get reads the manifest with the given digest of a release, checking
	// that its bytes parse to a manifest of that release with that digest
	// (a *CorruptError otherwise). A missing manifest is ErrNotFound.
	Get(ctx context.Context, release string, d Digest) (*Signed, error)
	// Channel reads a channel's pointer. A channel that does not exist is
	// ErrNotFound; a damaged pointer document a *CorruptError.
	Channel(ctx context.Context, release, channel string) (*Pointer, error)
	// Move points the channel of s's release at s, only if s's generation
	// is strictly higher than the channel's (NextPointer decides, under the
	// backend's compare-and-swap, re-reading the channel after every lost
	// race); otherwise it returns a *GenerationError. s must be stored
	// (Put) first: a manifest that is not there is ErrNotFound. A channel
	// that keeps moving under it is a *ConflictError after a bounded number
	// of attempts; a damaged pointer is a *CorruptError and is never
	// overwritten.
	Move(ctx context.Context, channel string, s *Signed, by string) (*Pointer, error)
	// List returns the digests of every stored manifest of a release.
	List(ctx context.Context, release string) ([]Digest, error)
	// Delete removes a stored manifest with its signature and bundle;
	// deleting one that is not there is not an error. Callers make sure
	// that no channel points to it (store.GC does).
	Delete(ctx context.Context, release string, d Digest) error
	// Channels lists the channel names of a release.
	Channels(ctx context.Context, release string) ([]string, error)
	// Releases lists the names of the releases the store has a place for
	// (a directory, a key prefix), sorted; none for a store that is empty
	// or not there. A name that is not a valid release name is not the
	// store's and is left out.
	Releases(ctx context.Context) ([]string, error)
}

// Pointer is a channel's pointer document: which manifest the channel
// names, with its generation, and when and by whom it moved.
type Pointer struct {
	Release    string    `json:"release"`
	Channel    string    `json:"channel"`
	Digest     Digest    `json:"digest"`
	Generation int64     `json:"generation"`
	MovedAt    time.Time `json:"movedAt"`
	MovedBy    string    `json:"movedBy,omitempty"`
	// History holds the channel's earlier positions, newest first, bounded.
	History []PointerEntry `json:"history,omitempty"`
}

// PointerEntry is one earlier position of a channel.
type PointerEntry struct {
	Digest     Digest    `json:"digest"`
	Generation int64     `json:"generation"`
	MovedAt    time.Time `json:"movedAt"`
	MovedBy    string    `json:"movedBy,omitempty"`
}

// ErrNotFound is returned (wrapped) for a manifest or channel that does not
// exist.
var ErrNotFound = errors.New("not found")

// GenerationError refuses to move a channel to a generation that is not
// strictly higher than the one it names, or a consumer to accept a
// generation lower than one it already accepted.
type GenerationError struct {
	Release string
	Channel string
	// Have is the generation already there; Offered the one refused.
	Have, Offered int64
	// HaveDigest and OfferedDigest are the manifests, where known.
	HaveDigest, OfferedDigest Digest
	// Floor, when set, is the channel whose generation (Have) is the
	// lowest of the release: Channel does not exist yet and may not start
	// below it, since gc deletes what lies below every channel.
	Floor string
}

func (e *GenerationError) Error() string {
	where := "release " + e.Release
	if e.Channel != "" {
		where += " channel " + e.Channel
	}
	if e.Floor != "" {
		return where + ": a new channel cannot start at generation " + itoa(e.Offered) +
			", below generation " + itoa(e.Have) + " that channel " + e.Floor +
			" names: gc may already have deleted the manifests below it"
	}
	msg := where + ": generation " + itoa(e.Offered) + " is not newer than generation " + itoa(e.Have)
	if !e.HaveDigest.IsZero() {
		msg += " (" + e.HaveDigest.String() + ")"
		if e.HaveDigest == e.OfferedDigest {
			msg += "; that manifest is already there"
		}
	}
	return msg
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
