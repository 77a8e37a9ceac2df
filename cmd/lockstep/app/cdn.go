package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/prune"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

func cdnCommand(inv *invocation) *cli.Command {
	def := transport.DefaultPolicy()
	return group("cdn", "check a release's assets on its CDN",
		describe("cdn check asks every CDN base for every asset of a manifest, the check record --check-cdn runs\n"+
			"before it writes one.",
			[]string{
				"lockstep cdn check --manifest release.json",
				"lockstep cdn check --store s3://releases/lockstep --release store-web --full",
			},
			groupExits("cdn")),
		&cli.Command{
			Name:      "check",
			Usage:     "check that every asset of the manifest is on every CDN base, byte for byte",
			ArgsUsage: " ",
			Description: describe("For every asset and CDN base: a HEAD (a ranged GET where HEAD is refused) must give 200, the recorded\n"+
				"size and, where the CDN states one (x-amz-checksum-sha256, a SHA-256 ETag, Digest, Repr-Digest), the\n"+
				"recorded hash; --full downloads and hashes every byte. The report says of each asset, and in its summary,\n"+
				"whether the bytes, a checksum header or only the size were compared; --require-content makes size only\n"+
				"a failure.",
				[]string{
					"lockstep cdn check --manifest release.json",
					"lockstep cdn check --store s3://releases/lockstep --release store-web --full --format json",
					"lockstep cdn check --manifest release.json --sample 50 --rate 20 --require-content",
				},
				exits{
					0: "every asset present on every CDN base",
					1: "any missing, wrong, looping or TLS-failing asset",
					2: "bad input (an origin that is the CDN)",
					3: "the CDN could not be checked (or, with --require-content, only sizes were)",
				}),
			Flags: append(sourceFlags(),
				&cli.StringFlag{Name: "origin", Usage: "the CDN's origin (overrides assets.origin); refused if it is the CDN or resolves to it"},
				&cli.BoolFlag{Name: "full", Usage: "download and hash every asset (reads at most its recorded size + 1 byte)"},
				&cli.BoolFlag{Name: "require-content", Usage: "an asset only its size vouches for (no checksum header, no --full) is not verified (exit 3)"},
				&cli.IntFlag{Name: "sample", Usage: "check a random N of the assets instead of all (0: all)"},
				&cli.Uint64Flag{Name: "seed", Usage: "seed for --sample, to repeat a sample (0: random)"},
				&cli.IntFlag{Name: "concurrency", Value: def.MaxConnsPerHost, Usage: "requests in flight, in all and per CDN host"},
				&cli.Float64Flag{Name: "rate", Usage: "cap on requests per second across the check (0: none)"},
				&cli.DurationFlag{Name: "timeout", Value: def.Timeout, Usage: "timeout of one attempt (headers and body)"},
				&cli.DurationFlag{Name: "tls-warn", Value: cdn.DefaultTLSWarn, Usage: "warn of a certificate that expires within this"},
				&cli.BoolFlag{Name: "ignore-etag", Usage: "do not compare an ETag that looks like a SHA-256 with the recorded hash"},
				formatFlag(cdn.Formats...),
			),
			Action: inv.act(cdnCheck),
		}, cdnPruneCommand(inv))
}

func cdnCheck(c *cli.Context, inv *invocation) error {
	f, err := format(c, cdn.Formats...)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usage(fmt.Errorf("cdn check takes no arguments, got %q", c.Args().First()))
	}
	opts, err := cdnOptionsFromFlags(c, inv)
	if err != nil {
		return err
	}
	src, err := anySourceFromFlags(c.Context, c, inv)
	if err != nil {
		return err
	}
	m, location, err := manifest.FetchAssetList(c.Context, src)
	if err != nil {
		return inputError("--manifest", err)
	}
	if len(m.Assets.Files) == 0 {
		opts.Logger.Warn("the manifest lists no assets: nothing to check", "manifest", location)
	}
	if f == "json" {
		opts.Stream = c.App.Writer // written as the results come
	}
	rep, err := cdn.Check(c.Context, m.Assets, opts)
	if err != nil {
		return err
	}
	if opts.Stream == nil {
		if err := rep.Write(c.App.Writer, f, Version); err != nil {
			return err
		}
	}
	return rep.Err()
}

// cdnOptionsFromFlags checks cdn check's flags and turns them into
// cdn.Options, with a client whose per-host cap is --concurrency.
func cdnOptionsFromFlags(c flagValues, inv *invocation) (cdn.Options, error) {
	switch {
	case c.Int("sample") < 0:
		return cdn.Options{}, usage(fmt.Errorf("--sample %d: want 0 or more", c.Int("sample")))
	case c.Int("concurrency") < 1:
		return cdn.Options{}, usage(fmt.Errorf("--concurrency %d: want 1 or more", c.Int("concurrency")))
	case c.Float64("rate") < 0:
		return cdn.Options{}, usage(fmt.Errorf("--rate %v: want 0 (none) or more", c.Float64("rate")))
	case c.Duration("timeout") <= 0 || c.Duration("tls-warn") <= 0:
		return cdn.Options{}, usage(fmt.Errorf("--timeout and --tls-warn must be positive"))
	}
	p := transport.DefaultPolicy()
	p.MaxConnsPerHost, p.Rate, p.Timeout = c.Int("concurrency"), c.Float64("rate"), c.Duration("timeout")
	return cdn.Options{
		Client:         inv.client(p, clientOptions{Log: true, UniquePaths: true, LeanHeads: true}),
		Full:           c.Bool("full"),
		RequireContent: c.Bool("require-content"),
		Sample:         c.Int("sample"),
		Seed:           c.Uint64("seed"),
		Concurrency:    c.Int("concurrency"),
		Origin:         c.String("origin"),
		IgnoreETag:     c.Bool("ignore-etag"),
		TLSWarn:        c.Duration("tls-warn"),
		Logger:         inv.log,
		Progress:       inv.progress("checking assets"),
	}, nil
}

func cdnPruneCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "prune",
		Usage:     "delete from the CDN's origin the assets no kept generation lists (a dry run unless --yes); never one a live, recent or running generation serves",
		ArgsUsage: " ",
		Description: describe("Skew protection: an instance still serving an older generation must never reference an asset that is\n"+
			"gone. A generation is kept by gc's rules: the newest --keep, every one a channel names or could still move\n"+
			"to, every one an --in-use fleet report shows running, and, with --older-than, every one created within it.\n"+
			"An object is deleted only when a generation of --release that is not kept lists it (at its recorded size),\n"+
			"no kept one does, and no manifest of any other release of the store does (releases may share an origin);\n"+
			"an object no manifest lists (an upload whose manifest is not stored yet, an asset of a generation gc already\n"+
			"deleted) is kept unless --prune-unknown, and so is one modified within --older-than. It refuses, deleting\n"+
			"nothing, when what it must keep cannot be known: an empty or missing store, a release it does not hold, a\n"+
			"release with no manifest or no channel, a channel naming a manifest that is gone, a --channel the release\n"+
			"does not have, an unreadable manifest of any release, or --prune-unknown when the kept generations list no\n"+
			"asset. Before each delete the store's manifests (of every release), its channels and the object are read\n"+
			"again; after the last, the store once more. Every delete is logged. The origin is a directory (file:///DIR\n"+
			"or a path; symbolic links are never followed or deleted) or s3://BUCKET/PREFIX, as --store.",
			[]string{
				"lockstep cdn prune --store s3://releases/web --release web --origin s3://assets/web --keep 5",
				"lockstep cdn prune --store /srv/releases --release web --origin /srv/www --keep 3 --in-use fleet.json \\\n  --older-than 24h --yes",
			},
			exits{
				0: "pruned (or, without --yes, the dry run's report)",
				1: "refused: an asset of a kept generation is missing from the origin (skew already there, or the wrong --origin); nothing deleted. Or a manifest stored between prune's last read and a delete lists a deleted object: upload it again",
				2: "bad input (a flag, a store or origin URL, a document that is not a fleet report, a --release the store does not hold, a --channel the release does not have, --prune-unknown with no kept asset); nothing deleted",
				3: "what to keep cannot be known (an empty or missing store, a release with no manifest or no channel, a channel naming a missing manifest) or the store, a manifest, the origin or a report could not be read: nothing deleted; or a delete failed",
			}),
		Flags: []cli.Flag{
			storeURLFlag(), storeReleaseFlag(),
			&cli.StringFlag{Name: "origin", Usage: "the CDN's origin, where the assets are: file:///DIR, a directory, or s3://BUCKET/PREFIX", Required: true},
			&cli.IntFlag{Name: "keep", Usage: "keep the assets of the newest N generations, whatever else holds", Required: true},
			inUseFlag("delete the assets of"),
			&cli.DurationFlag{Name: "older-than", Usage: "keep every generation created, and every object modified, within this (above your pipeline's upload-to-publish time)"},
			&cli.BoolFlag{Name: "prune-unknown", Usage: "delete objects that no manifest of any release lists, too (refused when the kept generations list no asset)"},
			&cli.StringSliceFlag{Name: "channel", Usage: "a channel of --release that must exist (repeatable): a mistyped one is refused"},
			&cli.BoolFlag{Name: "yes", Usage: "delete; without it, only report what would be deleted"},
			formatFlag("text", "json"),
		},
		Action: inv.act(cdnPrune),
	}
}

// pruneFlags are the flags of prune's options.
var pruneFlags = map[string]string{"Keep": "--keep", "InUse": "--in-use", "Running": "--in-use", "OlderThan": "--older-than",
	"Release": "--release", "Channels": "--channel", "PruneUnknown": "--prune-unknown"}

func cdnPrune(c *cli.Context, inv *invocation) error {
	f, err := format(c, "text", "json")
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usage(fmt.Errorf("cdn prune takes no arguments, got %q", c.Args().First()))
	}
	o := prune.Options{
		GCOptions:    store.GCOptions{Keep: c.Int("keep"), Delete: c.Bool("yes"), Logger: inv.log},
		OlderThan:    c.Duration("older-than"),
		PruneUnknown: c.Bool("prune-unknown"),
		Channels:     c.StringSlice("channel"),
	}
	if err := addReports(c, &o.GCOptions, unverified); err != nil {
		return err
	}
	origin, err := inv.openOrigin(c.Context, c.String("origin"), c.String("store"))
	if err != nil {
		return err
	}
	st, err := inv.openStore(c.Context, c.String("store"), nil)
	if err != nil {
		return err
	}
	r, err := prune.Run(c.Context, st, c.String("release"), origin, o)
	err = flagged(err, pruneFlags)
	if r != nil {
		if werr := r.Write(c.App.Writer, f); err == nil {
			err = werr
		}
	}
	return err
}
