package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
)

// NotFoundError is a release or channel that a store does not hold, with
// what the store does hold, so that a mistyped name, a wrong --store and a
// release not yet published read differently. It wraps
// manifest.ErrNotFound. Every consumer of a channel (status, manifest get,
// admit, the agent, fleet check) returns it for the same cause, and the
// CLI exits 3 for it: the store answered, and there is nothing to verify
// against.
type NotFoundError struct {
	// Store names the store (its URL).
	Store   string
	Release string
	Channel string
	// Releases are the releases the store holds: none when the store is
	// empty or does not exist. Nil with ListErr set when it could not be
	// listed.
	Releases []string
	// Channels are Release's channels, when the store holds Release.
	Channels []string
	// ListErr is why the store's releases or channels could not be
	// listed (the message then says only what was not found).
	ListErr error
	// Err is the store's own answer (it wraps manifest.ErrNotFound).
	Err error
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	switch {
	case e.ListErr != nil:
		fmt.Fprintf(&b, "channel %s of release %s: not found in store %s (and its releases could not be listed: %v)", e.Channel, e.Release, e.Store, e.ListErr)
	case len(e.Releases) == 0:
		fmt.Fprintf(&b, "release %s: store %s holds no release: is --store right? (a store gets its first release from lockstep publish)", e.Release, e.Store)
	case !slices.Contains(e.Releases, e.Release):
		fmt.Fprintf(&b, "release %s is not in store %s, which holds %s", e.Release, e.Store, strings.Join(e.Releases, ", "))
	case len(e.Channels) == 0:
		fmt.Fprintf(&b, "release %s has no channel in store %s yet (channel %s was asked for)", e.Release, e.Store, e.Channel)
	default:
		fmt.Fprintf(&b, "release %s has no channel %s in store %s; its channels: %s", e.Release, e.Channel, e.Store, strings.Join(e.Channels, ", "))
	}
	return b.String()
}

// Unwrap is the store's own answer, which wraps manifest.ErrNotFound.
func (e *NotFoundError) Unwrap() error {
	if e.Err == nil {
		return manifest.ErrNotFound
	}
	return e.Err
}

// notFound is the *NotFoundError for a channel that st, named name, does
// not hold (cause: st's answer): it lists the store's releases and, when
// the release is among them, its channels.
func notFound(ctx context.Context, st manifest.Store, name, release, channel string, cause error) error {
	e := &NotFoundError{Store: name, Release: release, Channel: channel, Err: cause}
	rels, err := st.Releases(ctx)
	if err != nil {
		e.ListErr = err
		return e
	}
	e.Releases = slices.Sorted(slices.Values(rels))
	if slices.Contains(rels, release) {
		chs, err := st.Channels(ctx, release)
		if err != nil && !errors.Is(err, manifest.ErrNotFound) {
			e.ListErr = err
			return e
		}
		e.Channels = slices.Sorted(slices.Values(chs))
	}
	return e
}
