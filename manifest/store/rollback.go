package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// RollbackOptions says what to roll back to.
type RollbackOptions struct {
	Release, Channel string
	// To is a manifest digest ("sha256:…") or a generation number.
	To string
	// By is recorded as the mover.
	By string
	// Now is the new manifest's createdAt (default time.Now).
	Now time.Time
	// NoPublish makes the manifest only: nothing is stored or moved (to
	// sign it before publishing it).
	NoPublish bool
	// Sign, when set, signs the new manifest's bytes before it is
	// published: it returns the base64 signature (MANIFEST.sig) and, where
	// it makes one, the Sigstore bundle.
	Sign func(ctx context.Context, raw []byte) (signature, bundle []byte, err error)
	// AllowUnsigned lets Rollback publish with no Sign: without it, an
	// unsigned rollback is refused (RequireSigned) before anything is
	// stored, since consumers that require signatures would refuse it.
	AllowUnsigned bool
}

// RollbackResult is what Rollback did: the manifest it rolled back to
// (From), the new manifest with that content, and the channel's new
// pointer (nil with NoPublish).
type RollbackResult struct {
	// Channel is the channel rolled back (o.Channel, or DefaultChannel).
	Channel  string
	From     *manifest.Signed
	Manifest *manifest.Signed
	Pointer  *manifest.Pointer
}

// Rollback publishes, on o.Channel, a new manifest whose content is the
// release named by o.To (a digest, "sha256:…", or a generation number) and
// whose generation is NextGeneration's: a rollback is a new, higher
// generation, so that no consumer's rollback protection has to be turned
// off. The new manifest is created at now; when the old one expired, the
// new one keeps its lifetime (expiresAt − createdAt) from now. The old
// signature is over the old bytes, so the new manifest is signed with
// o.Sign; with no Sign it is published only with o.AllowUnsigned (an
// *UnsignedError otherwise, before anything is stored).
// A generation or digest that is not in the store wraps
// manifest.ErrNotFound; a channel that moved meanwhile is a
// *manifest.GenerationError.
func Rollback(ctx context.Context, st manifest.Store, o RollbackOptions) (*RollbackResult, error) {
	release, channel, now := o.Release, o.Channel, o.Now
	if channel == "" {
		channel = DefaultChannel
	}
	if now.IsZero() {
		now = time.Now()
	}
	from, err := find(ctx, st, release, channel, o.To)
	if err != nil {
		return nil, err
	}
	if o.Sign == nil && !o.AllowUnsigned && !o.NoPublish {
		return nil, &UnsignedError{Release: release, Reason: "a rollback makes a new manifest, and nothing signs it"}
	}
	gen, err := NextGeneration(ctx, st, release, channel)
	if err != nil {
		return nil, err
	}
	m := *from.Manifest
	m.Release.Generation = gen
	m.Release.CreatedAt = now.UTC().Truncate(time.Second)
	if old := from.Manifest.Release.ExpiresAt; old != nil {
		exp := m.Release.CreatedAt.Add(old.Sub(from.Manifest.Release.CreatedAt))
		m.Release.ExpiresAt = &exp
	}
	raw, err := m.Indent()
	if err != nil {
		return nil, err
	}
	s, err := manifest.NewSigned(raw, "rollback of "+from.Digest.String())
	if err != nil {
		return nil, err
	}
	if o.Sign != nil {
		if s.Signature, s.Bundle, err = o.Sign(ctx, raw); err != nil {
			return nil, fmt.Errorf("signing the rollback manifest: %w", err)
		}
	}
	if o.NoPublish {
		return &RollbackResult{Channel: channel, From: from, Manifest: s}, nil
	}
	p, err := Publish(ctx, st, s, channel, o.By)
	if err != nil {
		return nil, err
	}
	return &RollbackResult{Channel: channel, From: from, Manifest: s, Pointer: p}, nil
}

// find returns the manifest to roll back to: by digest, or by generation
// (the channel's history first, then every stored manifest).
func find(ctx context.Context, st manifest.Store, release, channel, to string) (*manifest.Signed, error) {
	if d, err := manifest.ParseDigest(to); err == nil {
		return st.Get(ctx, release, d)
	}
	gen, err := strconv.ParseInt(to, 10, 64)
	if err != nil || gen < 1 {
		return nil, &verdict.OptionError{Option: "To", Reason: fmt.Sprintf("%q is neither a digest (sha256:…) nor a generation", to)}
	}
	if p, err := st.Channel(ctx, release, channel); err == nil {
		for _, h := range p.History {
			if h.Generation == gen {
				if s, err := st.Get(ctx, release, h.Digest); err == nil {
					return s, nil
				}
			}
		}
	} else if !errors.Is(err, manifest.ErrNotFound) {
		return nil, err
	}
	ds, err := st.List(ctx, release)
	if err != nil {
		return nil, err
	}
	var found *manifest.Signed
	for _, d := range ds {
		s, err := st.Get(ctx, release, d)
		if err != nil {
			continue
		}
		if s.Manifest.Release.Generation == gen && (found == nil || s.Manifest.Release.CreatedAt.After(found.Manifest.Release.CreatedAt)) {
			found = s
		}
	}
	if found == nil {
		return nil, fmt.Errorf("generation %d of release %s: %w", gen, release, manifest.ErrNotFound)
	}
	return found, nil
}

// Signed reports whether the new manifest carries a signature or a bundle.
func (r *RollbackResult) Signed() bool {
	return len(r.Manifest.Signature) > 0 || len(r.Manifest.Bundle) > 0
}

// rollbackJSON is the "json" shape of a RollbackResult (stable).
type rollbackJSON struct {
	Release        string            `json:"release"`
	Channel        string            `json:"channel"`
	FromDigest     manifest.Digest   `json:"fromDigest"`
	FromGeneration int64             `json:"fromGeneration"`
	Digest         manifest.Digest   `json:"digest"`
	Generation     int64             `json:"generation"`
	Published      bool              `json:"published"`
	Signed         bool              `json:"signed"`
	Pointer        *manifest.Pointer `json:"pointer,omitempty"`
}

// Write renders the result in format, "json" or (anything else) one line
// of text: what was published or written, and from which generation.
func (r *RollbackResult) Write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rollbackJSON{
			Release: r.Manifest.Manifest.Release.Name, Channel: r.Channel,
			FromDigest: r.From.Digest, FromGeneration: r.From.Manifest.Release.Generation,
			Digest: r.Manifest.Digest, Generation: r.Manifest.Manifest.Release.Generation,
			Published: r.Pointer != nil, Pointer: r.Pointer, Signed: r.Signed(),
		})
	}
	verb, how := "published", "signed"
	if r.Pointer == nil {
		verb = "wrote (not published)"
	}
	if !r.Signed() {
		how = "unsigned"
	}
	_, err := fmt.Fprintf(w, "%s %s generation %d %s: the content of generation %d %s (%s)\n", verb,
		r.Channel, r.Manifest.Manifest.Release.Generation, r.Manifest.Digest, r.From.Manifest.Release.Generation, r.From.Digest, how)
	return err
}
