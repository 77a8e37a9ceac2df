package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
)

// channelSourceFromFlags is the store branch of sourceFromFlags; an
// s3:// store sends on client (nil: its own).
func channelSourceFromFlags(ctx context.Context, c flagValues, inv *invocation, url string, client *transport.Client) (manifest.Source, error) {
	release := c.String("release")
	if release == "" {
		return nil, usage(fmt.Errorf("--store needs --release NAME"))
	}
	if err := manifest.ValidateName(release); err != nil {
		return nil, usage(fmt.Errorf("--release: %w", err))
	}
	st, err := inv.openStore(ctx, url, client)
	if err != nil {
		return nil, err
	}
	return store.ChannelSource{Store: st, Release: release, Channel: c.String("channel"), Name: url}, nil
}

// trustedSourceFromFlags is where the source flags and the state flags
// become a consumer's manifest source: the source the flags name
// (sourceFromFlags), wrapped for the --max-age fallback to the trusted
// state's cache. It is also admission.Check's guard, by that state (Check
// refuses a rollback, Accept records an admission). A manifest URL or an
// s3:// store is reached through client.
func trustedSourceFromFlags(ctx context.Context, c flagValues, inv *invocation, client *transport.Client) (*trusted.Source, error) {
	if c.Duration("max-age") < 0 {
		return nil, usage(fmt.Errorf("--max-age must not be negative"))
	}
	if c.Duration("max-age") > 0 && c.String("store") == "" {
		return nil, usage(fmt.Errorf("--max-age needs --store URL --release NAME: it bounds the cache of a store's channel"))
	}
	src, err := sourceWithClient(ctx, c, inv, client)
	if err != nil {
		return nil, err
	}
	st, err := trusted.Open(c.String("state-dir"))
	if err == nil {
		err = st.Writable()
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, usage(fmt.Errorf("--state-dir %s: %w: run as a user who may write it, or give --state-dir (or LOCKSTEP_STATE_DIR) a directory this user owns",
			c.String("state-dir"), err))
	}
	if err != nil {
		return nil, unverified(err)
	}
	return &trusted.Source{Upstream: src, State: st, Release: c.String("release"), MaxAge: c.Duration("max-age"), Logger: inv.log}, nil
}

// autoGeneration is `record --generation auto`: the next generation of
// release on the store and channel of storeFlags.
func autoGeneration(ctx context.Context, c flagValues, inv *invocation, release string) (int64, error) {
	url := c.String("store")
	if url == "" {
		return 0, usage(fmt.Errorf("--generation auto needs --store URL"))
	}
	st, err := inv.openStore(ctx, url, nil)
	if err != nil {
		return 0, err
	}
	return store.NextGeneration(ctx, st, release, c.String("channel"))
}
