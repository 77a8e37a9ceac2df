package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultChannel is the channel commands use unless told.
const DefaultChannel = "production"

// Publish stores s and moves channel to it, recording by as the mover. It
// returns the channel's new pointer, or a *manifest.GenerationError when
// the channel already names an equal or higher generation (the manifest
// stays stored; gc takes it in time).
//
// A channel that does not exist yet may not start below the lowest
// generation any other channel of the release names: GC deletes what lies
// below that floor, so a new channel there could name a manifest that is
// already gone, or that GC takes between the store and the move. That
// refusal is a *manifest.GenerationError with Floor set, and nothing is
// written.
func Publish(ctx context.Context, st manifest.Store, s *manifest.Signed, channel, by string) (*manifest.Pointer, error) {
	if s == nil || s.Manifest == nil {
		return nil, errors.New("publishing: no manifest")
	}
	if err := manifest.Validate(s.Manifest); err != nil {
		return nil, err
	}
	if err := checkFloor(ctx, st, s, channel); err != nil {
		return nil, err
	}
	if err := st.Put(ctx, s); err != nil {
		return nil, fmt.Errorf("storing %s: %w", s.Manifest.ID(), err)
	}
	p, err := st.Move(ctx, channel, s, by)
	if err != nil {
		return nil, fmt.Errorf("publishing %s: %w", s.Manifest.ID(), err)
	}
	return p, nil
}

// checkFloor refuses to start channel below the release's floor, the
// lowest generation any of its channels names (see Publish). An existing
// channel is left to Move's compare-and-swap.
func checkFloor(ctx context.Context, st manifest.Store, s *manifest.Signed, channel string) error {
	release := s.Manifest.Release.Name
	_, err := st.Channel(ctx, release, channel)
	if err == nil {
		return nil
	}
	if !errors.Is(err, manifest.ErrNotFound) {
		return fmt.Errorf("reading channel %s: %w", channel, err)
	}
	ps, err := channelPointers(ctx, st, release)
	if err != nil {
		return err
	}
	var low *manifest.Pointer
	lowName := ""
	for _, p := range ps {
		if p.Channel != channel && (low == nil || p.Generation < low.Generation) {
			low, lowName = p, p.Channel
		}
	}
	if low == nil || s.Manifest.Release.Generation >= low.Generation {
		return nil
	}
	return &manifest.GenerationError{
		Release: release, Channel: channel,
		Have: low.Generation, Offered: s.Manifest.Release.Generation,
		HaveDigest: low.Digest, OfferedDigest: s.Digest,
		Floor: lowName,
	}
}

// Pointers reads the pointer of every channel of release, as GC reads
// them: a channel deleted between the listing and the read is left out, a
// pointer that cannot be read is an error (what is live cannot be known).
func Pointers(ctx context.Context, st manifest.Store, release string) ([]*manifest.Pointer, error) {
	return channelPointers(ctx, st, release)
}

// channelPointers reads the pointer of every channel of release; a
// channel deleted between the listing and the read is left out, a pointer
// that cannot be read is an error (what is live cannot be known).
func channelPointers(ctx context.Context, st manifest.Store, release string) ([]*manifest.Pointer, error) {
	names, err := st.Channels(ctx, release)
	if err != nil {
		return nil, fmt.Errorf("listing channels of %s: %w", release, err)
	}
	var ps []*manifest.Pointer
	for _, n := range names {
		p, err := st.Channel(ctx, release, n)
		if errors.Is(err, manifest.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading channel %s: %w", n, err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// UnsignedError is a manifest that would be published with no signature
// and no bundle, which every consumer that requires signatures refuses.
type UnsignedError struct {
	Release string
	// Reason says why there is no signature, or is empty.
	Reason string
}

func (e *UnsignedError) Error() string {
	msg := "refusing to publish an unsigned manifest of " + e.Release
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg + "; consumers that require signatures would refuse it"
}

// RequireSigned returns an *UnsignedError for a manifest that carries
// neither a signature nor a Sigstore bundle. It checks presence only: the
// consumers verify.
func RequireSigned(s *manifest.Signed) error {
	if len(s.Signature) > 0 || len(s.Bundle) > 0 {
		return nil
	}
	release := ""
	if s.Manifest != nil {
		release = s.Manifest.ID()
	}
	return &UnsignedError{Release: release, Reason: "no " + manifest.SignatureSuffix + " or " + manifest.BundleSuffix + " beside it"}
}

// NextGeneration returns the generation a new manifest of release should
// carry: one more than the highest generation any of the release's
// channels names (channel first, so that a new channel of an existing
// release still rises), or 1 for a release that has none. This is
// `record --generation auto` and `rollback`. A damaged pointer is an
// error, never a guess; a release at manifest.MaxGeneration is a
// *manifest.ValidationError, never an overflow.
func NextGeneration(ctx context.Context, st manifest.Store, release, channel string) (int64, error) {
	names, err := st.Channels(ctx, release)
	if err != nil {
		return 0, fmt.Errorf("listing channels of %s: %w", release, err)
	}
	if channel != "" {
		names = append([]string{channel}, names...)
	}
	var high int64
	for _, n := range names {
		p, err := st.Channel(ctx, release, n)
		if errors.Is(err, manifest.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("reading channel %s: %w", n, err)
		}
		high = max(high, p.Generation)
	}
	if high >= manifest.MaxGeneration {
		return 0, &manifest.ValidationError{
			Field:  "release.generation",
			Reason: fmt.Sprintf("release %s is at generation %d, the maximum: no generation can follow it", release, high),
		}
	}
	return high + 1, nil
}

// StatusReport is a channel's state: where it points, the manifest there,
// and where it pointed before. Its JSON shape is documented in docs/stores.md.
type StatusReport struct {
	Release    string                  `json:"release"`
	Channel    string                  `json:"channel"`
	Digest     manifest.Digest         `json:"digest"`
	Generation int64                   `json:"generation"`
	MovedAt    time.Time               `json:"movedAt"`
	MovedBy    string                  `json:"movedBy,omitempty"`
	CreatedAt  time.Time               `json:"createdAt"`
	ExpiresAt  *time.Time              `json:"expiresAt,omitempty"`
	Signed     bool                    `json:"signed"`
	Source     *manifest.BuildSource   `json:"source,omitempty"`
	History    []manifest.PointerEntry `json:"history"`
}

// Status reads a channel and the manifest it names. A channel that does
// not exist is manifest.ErrNotFound; a pointer naming a manifest that is
// not there a *manifest.CorruptError.
func Status(ctx context.Context, st manifest.Store, release, channel string) (*StatusReport, error) {
	p, s, err := read(ctx, st, release, channel)
	if err != nil {
		return nil, err
	}
	r := s.Manifest.Release
	h := p.History
	if h == nil {
		h = []manifest.PointerEntry{}
	}
	return &StatusReport{
		Release: p.Release, Channel: p.Channel, Digest: p.Digest, Generation: p.Generation,
		MovedAt: p.MovedAt, MovedBy: p.MovedBy, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt,
		Signed: len(s.Signature) > 0 || len(s.Bundle) > 0, Source: r.Source, History: h,
	}, nil
}

// read returns a channel's pointer and the manifest it names, checked
// against each other.
func read(ctx context.Context, st manifest.Store, release, channel string) (*manifest.Pointer, *manifest.Signed, error) {
	p, err := st.Channel(ctx, release, channel)
	if errors.Is(err, manifest.ErrNotFound) {
		return nil, nil, notFound(ctx, st, storeName(st, ""), release, channel, err)
	}
	if err != nil {
		return nil, nil, err
	}
	s, err := st.Get(ctx, release, p.Digest)
	if errors.Is(err, manifest.ErrNotFound) {
		return nil, nil, &manifest.CorruptError{
			Location: release + "/channels/" + channel + ".json",
			Reason:   "it names manifest " + p.Digest.String() + ", which is not in the store",
			Err:      err,
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if s.Manifest.Release.Generation != p.Generation {
		return nil, nil, &manifest.CorruptError{
			Location: release + "/channels/" + channel + ".json",
			Reason:   fmt.Sprintf("it says generation %d, but manifest %s is generation %d", p.Generation, p.Digest, s.Manifest.Release.Generation),
		}
	}
	return p, s, nil
}

// ChannelSource is the manifest a channel of a store names: the
// manifest.Source of every consumer given --store URL --release NAME
// [--channel NAME].
type ChannelSource struct {
	Store   manifest.Store
	Release string
	Channel string
	// Name names the store in errors and locations, e.g. its URL.
	Name string
}

var _ manifest.Source = ChannelSource{}

// Fetch reads the channel's pointer and the manifest it names. A store
// that cannot be reached is a *verdict.UnavailableError; a channel that
// does not exist wraps manifest.ErrNotFound; a damaged pointer or manifest
// is a *manifest.CorruptError.
func (c ChannelSource) Fetch(ctx context.Context) (*manifest.Signed, error) {
	channel := c.Channel
	if channel == "" {
		channel = DefaultChannel
	}
	_, s, err := read(ctx, c.Store, c.Release, channel)
	var nf *NotFoundError
	if errors.As(err, &nf) {
		nf.Store = c.name()
		return nil, nf
	}
	if err != nil {
		var ce *manifest.CorruptError
		var ve *manifest.ValidationError
		if errors.Is(err, manifest.ErrNotFound) || errors.As(err, &ce) || errors.As(err, &ve) || ctx.Err() != nil {
			return nil, fmt.Errorf("reading %s channel %s of %s: %w", c.Release, channel, c.name(), err)
		}
		return nil, verdict.Unavailable("manifest store "+c.name(), err)
	}
	return s, nil
}

// Previous is the manifest the channel names, as a new release's previous
// one (record --previous store, whose moved tags it refuses): nil, and no
// error, when the release or channel does not exist yet, since a first
// release has none. Other errors are Fetch's.
func (c ChannelSource) Previous(ctx context.Context) (*manifest.Signed, error) {
	s, err := c.Fetch(ctx)
	if errors.Is(err, manifest.ErrNotFound) {
		return nil, nil
	}
	return s, err
}

func (c ChannelSource) name() string { return storeName(c.Store, c.Name) }

// storeName is name, or what st says it is, for errors and locations.
func storeName(st manifest.Store, name string) string {
	if name != "" {
		return name
	}
	if s, ok := st.(fmt.Stringer); ok {
		return s.String()
	}
	return "the store"
}

// logger returns l, or a logger that discards.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Current returns the manifest a channel names, with its signature and
// bundle, once v has verified it (`lockstep manifest get`). Fetch's errors
// are ChannelSource's; a manifest v refuses is v's error (a
// *verdict.MismatchError for a signature that does not verify), and no
// manifest is returned with it.
func Current(ctx context.Context, st manifest.Store, release, channel string, v manifest.Verifier) (*manifest.Signed, error) {
	s, err := ChannelSource{Store: st, Release: release, Channel: channel}.Fetch(ctx)
	if err != nil {
		return nil, err
	}
	if err := v.Verify(ctx, s); err != nil {
		return nil, fmt.Errorf("verifying %s from the store: %w", s.Manifest.ID(), err)
	}
	return s, nil
}
