package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/remote"
)

// sourceFromFlags builds the manifest source the flags name, bound to the
// release the consumer follows (--release, required): every command that
// accepts a manifest (admit, the agent, fleet check, the webhook) takes it
// from here, so a manifest of another release is refused in one place.
func sourceFromFlags(ctx context.Context, c flagValues, inv *invocation) (manifest.Source, error) {
	return sourceWithClient(ctx, c, inv, nil)
}

// sourceWithClient is sourceFromFlags with a manifest URL or an s3://
// store reached through client (nil: clients of their own), so that the
// caller's TLS report and request count include them.
//
// --manifest without --release is exit 2: a manifest names its own
// release, so a consumer that does not say which release it follows would
// accept a signed manifest of any release (a staging build in production)
// and keep its trusted state under whatever name the manifest gives.
func sourceWithClient(ctx context.Context, c flagValues, inv *invocation, client *transport.Client) (manifest.Source, error) {
	if c.String("manifest") != "" && c.String("release") == "" {
		return nil, usage(fmt.Errorf("--manifest needs --release NAME: the release this consumer follows (a manifest of another release is refused)"))
	}
	return anySourceWithClient(ctx, c, inv, client)
}

// anySourceFromFlags is the source of a command that checks a build's
// manifest without accepting it for a consumer (cdn check): --release is
// optional with --manifest, and binds when given.
func anySourceFromFlags(ctx context.Context, c flagValues, inv *invocation) (manifest.Source, error) {
	return anySourceWithClient(ctx, c, inv, nil)
}

func anySourceWithClient(ctx context.Context, c flagValues, inv *invocation, client *transport.Client) (manifest.Source, error) {
	path, url := c.String("manifest"), c.String("store")
	var src manifest.Source
	switch {
	case path != "" && url != "":
		return nil, usage(fmt.Errorf("--manifest and --store are exclusive"))
	case strings.HasPrefix(path, "https://") || strings.HasPrefix(path, "http://"):
		r, err := remote.New(path, client)
		if err != nil {
			return nil, usage(err)
		}
		src = r
	case path != "":
		src = manifest.FileSource{Path: path}
	case url != "":
		return channelSourceFromFlags(ctx, c, inv, url, client)
	default:
		return nil, usage(fmt.Errorf("a manifest is required: --manifest FILE --release NAME or --store URL --release NAME"))
	}
	release := c.String("release")
	if release == "" {
		return src, nil
	}
	if err := manifest.ValidateName(release); err != nil {
		return nil, usage(fmt.Errorf("--release: %w", err))
	}
	return manifest.Bound{Source: src, Release: release}, nil
}
