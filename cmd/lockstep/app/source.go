package app

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/remote"
)

// sourceFlags are the flags every consumer of a manifest takes: a file or
// URL (--manifest) or a store channel (--store, --release, --channel).
func sourceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "manifest", Usage: "the release manifest: a file path or an https URL", EnvVars: []string{"LOCKSTEP_MANIFEST"}},
		&cli.StringFlag{Name: "store", Usage: "a manifest store URL (file://DIR, s3://BUCKET/PREFIX), in place of --manifest", EnvVars: []string{"LOCKSTEP_STORE"}},
		&cli.StringFlag{Name: "release", Usage: "the release name, with --store", EnvVars: []string{"LOCKSTEP_RELEASE"}},
		&cli.StringFlag{Name: "channel", Value: "production", Usage: "the store channel, with --store", EnvVars: []string{"LOCKSTEP_CHANNEL"}},
	}
}

// sourceFromFlags builds the manifest source the flags name.
func sourceFromFlags(c *cli.Context) (manifest.Source, error) {
	return sourceWithClient(c, nil)
}

// sourceWithClient is sourceFromFlags with a manifest URL or an s3://
// store reached through client (nil: clients of their own), so that the
// caller's TLS report and request count include them.
func sourceWithClient(c *cli.Context, client *transport.Client) (manifest.Source, error) {
	path, url := c.String("manifest"), c.String("store")
	switch {
	case path != "" && url != "":
		return nil, usage(fmt.Errorf("--manifest and --store are exclusive"))
	case strings.HasPrefix(path, "https://") || strings.HasPrefix(path, "http://"):
		src, err := remote.New(path, client)
		if err != nil {
			return nil, usage(err)
		}
		return src, nil
	case path != "":
		return manifest.FileSource{Path: path}, nil
	case url != "":
		return channelSourceFromFlags(c, url, client)
	}
	return nil, usage(fmt.Errorf("a manifest is required: --manifest FILE or --store URL --release NAME"))
}
