package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/internal/termbar"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/record"
	"github.com/lockstep-dev/lockstep/verify/cdn"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

func recordCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "pin a release's images, hash its assets, and write its manifest",
		UsageText: "lockstep record --release NAME --generation N|auto --image NAME=REF... --assets DIR --cdn URL... [--check-cdn] [--sign-key KEY] [--output FILE]",
		Description: describe("Every --image is resolved (a tag to its digest; a reference by digest for its platforms and config\n"+
			"digests), every file under --assets (or named by --asset-list) is hashed, and the canonical manifest is\n"+
			"written to --output atomically (its digest then goes to stdout), or to stdout. --check-cdn first checks\n"+
			"every asset on every CDN base (the report goes to stderr); --embed-signatures embeds the images'\n"+
			"verified signatures; --require-provenance verifies each image's SLSA provenance against the release's\n"+
			"source repository and commit (--embed-attestations keeps it in the manifest for the boot gate);\n"+
			"--sign-key writes OUTPUT.sig. Nothing is written on failure or refusal.",
			[]string{
				"lockstep record --release store-web --generation auto --store s3://releases/lockstep \\\n" +
					"  --image web=registry.example/store/web:v1.4.2 --assets dist --cdn https://cdn.example.com/store/ \\\n" +
					"  --check-cdn --sign-key cosign.key --output release.json",
				"lockstep record --release store-web --generation 7 --image web=registry.example/store/web:v1.4.2 \\\n" +
					"  --assets dist --asset-list dist/.vite/manifest.json --cdn https://cdn.example.com/store/ -o release.json",
				"lockstep record --release store-web --generation auto --store s3://releases/lockstep --previous store \\\n" +
					"  --image web=registry.example/store/web:v1.4.2 --assets dist --cdn https://cdn.example.com/store/ -o release.json",
				"lockstep record --release store-web --generation 7 --image web=ghcr.io/acme/store-web:v1.4.2 \\\n" +
					"  --require-provenance --embed-attestations --certificate-identity-regexp '^https://github.com/acme/store/' \\\n" +
					"  --certificate-oidc-issuer https://token.actions.githubusercontent.com -o release.json",
			},
			exits{
				0: "written",
				1: "an asset missing or wrong on the CDN (--check-cdn), a tag that moved since --previous, or an image whose provenance is missing or not of the release's source (--require-provenance)",
				2: "bad input (a flag, a path, an image that does not exist, a key that does not load)",
				3: "the registry, the CDN or the store could not be asked",
			}),
		Flags:  recordFlags(),
		Action: inv.act(recordAction),
	}
}

// recordFlags are record's flags.
func recordFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "release", Usage: "the release (service) `NAME` (required)", EnvVars: []string{"LOCKSTEP_RELEASE"}},
		&cli.StringFlag{Name: "generation", Usage: "the release generation `N` (required): at least 1, higher than any before it; \"auto\" takes the next one from --store's channel"},
		&cli.StringSliceFlag{Name: "image", Usage: "an image of the release, `NAME=REF` (repeatable)"},
		&cli.StringFlag{Name: "assets", Usage: "the `DIR` the CDN serves; every file in it is hashed"},
		&cli.StringSliceFlag{Name: "asset-list", Usage: "a Vite (.vite/manifest.json) or webpack assets manifest `FILE` naming the assets to hash, instead of walking --assets (repeatable)"},
		&cli.BoolFlag{Name: "walk", Usage: "with --asset-list, also hash every file under --assets (what --unlisted record does)"},
		&cli.StringFlag{Name: "unlisted", Value: string(assets.UnlistedRecord), Usage: "with --asset-list, the files under --assets it does not name (Vite's public/ copies), which the CDN serves too: record (hash them, named on stderr) or refuse (exit 2, naming them)"},
		&cli.StringSliceFlag{Name: "exclude", Usage: "leave out the files or directories, walked or named by --asset-list, whose path or name matches `PATTERN` (path.Match; repeatable; each is logged)"},
		&cli.BoolFlag{Name: "asset-graph", Value: true, Usage: "record what each asset loads (its imports, lazy chunks, CSS, fonts, images, workers), the graph admit's closure check walks; --asset-graph=false writes the manifest as lockstep.dev/v1, for gates older than v2"},
		&cli.StringFlag{Name: "graph-report", Usage: "write what the asset graph found to `FILE` as JSON: the pages and entry files a gate's closure starts from (roots; entries: each entry file with the bundler's list that names it), the files no root reaches (unreached), the files whose loads it cannot read (unread, with why)"},
		&cli.StringSliceFlag{Name: "instance-path", Usage: "the files the instance serves itself, not the CDN (Next.js's public/ files and .txt payloads, Angular's ngsw.json): those whose path, a folder of it, or name matches `PATTERN` (path.Match; repeatable); the manifest says so (lockstep.dev/v3) and admit checks them on the instance"},
		&cli.StringSliceFlag{Name: "cdn-and-instance-path", Usage: "the files both the CDN and the instance serve (Angular's app shell, which the page loads from the CDN and the service worker from its scope): those whose path, a folder of it, or name matches `PATTERN` (repeatable); admit checks them in both places"},
		&cli.StringSliceFlag{Name: "cdn-path", Usage: "the CDN serves only the files under the folder `DIR` (repeatable, e.g. _next for Next.js's assetPrefix); every other file is served by the instance, as with --instance-path"},
		&cli.StringFlag{Name: "public-path", Usage: "a `PREFIX` that --asset-list entries carry and paths under --assets do not (webpack's publicPath)"},
		&cli.StringSliceFlag{Name: "cdn", Usage: "a CDN base `URL` the assets are served under (repeatable)"},
		&cli.StringFlag{Name: "origin", Usage: "the CDN's origin base `URL`"},
		&cli.DurationFlag{Name: "expires-in", Usage: "set the manifest's expiry this `DURATION` after its creation (e.g. 720h)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the manifest to `FILE` (atomically) instead of stdout"},
		&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: text (the manifest's digest once written to --output, else the manifest) or json (the release, the generation taken, the digest and the files written; the manifest too without --output)"},
		&cli.StringFlag{Name: "source-repository", Usage: "the repository the release was built from (default: from GITHUB_SERVER_URL and GITHUB_REPOSITORY)"},
		&cli.StringFlag{Name: "source-commit", Usage: "the commit (default: GITHUB_SHA)"},
		&cli.StringFlag{Name: "source-ref", Usage: "the ref (default: GITHUB_REF)"},
		&cli.StringFlag{Name: "source-run-url", Usage: "the CI run URL (default: the GitHub Actions workflow run)"},
		&cli.IntFlag{Name: "workers", Usage: "hash `N` files at once (default: one per CPU)"},
		&cli.BoolFlag{Name: "check-cdn", Usage: "check every recorded asset on every CDN base before writing (lockstep cdn check); a missing or wrong asset refuses (exit 1)"},
		&cli.BoolFlag{Name: "check-cdn-full", Usage: "with --check-cdn, download and hash every asset instead of trusting the CDN's headers"},
		&cli.StringFlag{Name: "sign-key", Usage: "sign the manifest with this private `KEY` (cosign.key with COSIGN_PASSWORD, a PEM key, or a KMS URI), writing OUTPUT.sig", EnvVars: []string{"LOCKSTEP_SIGN_KEY"}},
		&cli.StringFlag{Name: "bundle", Usage: "with --sign-key, also write a Sigstore bundle to `FILE` (e.g. OUTPUT.sigstore.json)"},
		&cli.StringFlag{Name: "previous", Usage: "the previous release: a manifest `FILE`, or \"store\" for what --store's channel names; refuse tags that moved since (exit 1)"},
		&cli.StringSliceFlag{Name: "allow-moved-tag", Usage: "with --previous, accept this moved tag: a role `NAME`, a REF or a repo:tag (repeatable)"},
		&cli.BoolFlag{Name: "embed-signatures", Usage: "verify the images' cosign signatures now (--image-key or the keyless flags) and embed them in the manifest, so booting instances verify them without the registry"},
		&cli.BoolFlag{Name: "require-provenance", Usage: "verify each image's SLSA provenance attestations (cosign's .att tag, OCI referrers) signed by the builder (--provenance-key or the keyless flags), and that they name the pinned digest and the release's source repository and commit; anything else refuses (exit 1)"},
		&cli.BoolFlag{Name: "embed-attestations", Usage: "embed the provenance attestations that verified in the manifest (a lockstep.dev/v2 manifest), so booting instances verify provenance without the registry (admit --require-provenance); implies --require-provenance"},
		provenanceKeyFlag(),
	}
	flags = append(flags, storeFlags()...)
	flags = append(flags, imageSignatureFlags()...)
	return append(flags, identityFlags()...)
}

func recordAction(c *cli.Context, inv *invocation) error {
	if _, err := format(c, "text", "json"); err != nil {
		return err
	}
	out, err := recordOutput(c.Context, c, inv) // a key that does not load fails before any work
	if err != nil {
		return err
	}
	opts, err := recordOptions(c.Context, c, inv)
	if err != nil {
		return err
	}
	bar := termbar.Bytes(c.App.ErrWriter, "hashing assets")
	if bar != nil {
		opts.Assets.Progress = bar.Set
	}
	res, err := record.Record(c.Context, opts, out)
	bar.Finish()
	if res != nil && res.CDN != nil {
		if werr := res.CDN.Write(c.App.ErrWriter, "text", Version); werr != nil {
			return werr
		}
	}
	var ae *assets.Error
	if errors.As(err, &ae) && ae.PublicPath != "" {
		return usage(fmt.Errorf("%w: try --public-path %s", err, ae.PublicPath))
	}
	if errors.As(err, &ae) {
		return usage(err)
	}
	if err != nil {
		return err
	}
	return renderRecorded(c.App.Writer, c.String("format"), inv, res)
}

// recordOutput turns the flags on what to do with the manifest (check the
// CDN, sign, write) into the library's Output.
func recordOutput(ctx context.Context, c flagValues, inv *invocation) (record.Output, error) {
	out := record.Output{Path: c.String("output"), Bundle: c.String("bundle"), GraphReport: c.String("graph-report")}
	if c.Bool("check-cdn") {
		log := inv.log
		out.CheckCDN = &cdn.Options{
			Client:   inv.client(transport.DefaultPolicy(), clientOptions{Log: true}),
			Full:     c.Bool("check-cdn-full"),
			Logger:   log,
			Progress: inv.progress("checking assets on the CDN"),
		}
	} else if c.Bool("check-cdn-full") {
		return out, usage(errors.New("--check-cdn-full needs --check-cdn"))
	}
	key := c.String("sign-key")
	switch {
	case key == "" && out.Bundle != "":
		return out, usage(errors.New("--bundle needs --sign-key KEY"))
	case key == "":
		return out, nil
	case out.Path == "":
		return out, usage(errors.New("--sign-key needs --output FILE: the signature is written beside it"))
	}
	sv, err := signature.LoadSigner(ctx, key, inv.password())
	if err != nil {
		return out, keyErr(err)
	}
	opt := signature.SignOptions{Bundle: out.Bundle != ""}
	out.Sign = func(ctx context.Context, raw []byte) (*signature.Signature, error) {
		return signature.Sign(ctx, sv, raw, opt)
	}
	return out, nil
}

// recordOptions turns record's flags into the library's options.
func recordOptions(ctx context.Context, c flagValues, inv *invocation) (record.Options, error) {
	// Flags are not marked Required: urfave/cli reports a missing one as
	// a plain error, which would not exit 2.
	if c.String("release") == "" {
		return record.Options{}, usage(fmt.Errorf("--release NAME is required"))
	}
	var gen int64
	var err error
	if c.String("generation") == "auto" {
		if gen, err = autoGeneration(ctx, c, inv, c.String("release")); err != nil {
			return record.Options{}, err
		}
		inv.log.Info("the next generation on the store", "store", c.String("store"), "channel", c.String("channel"), "generation", gen)
	} else if gen, err = parseGeneration(c.String("generation")); err != nil {
		return record.Options{}, err
	}
	log := inv.log
	client := inv.client(transport.DefaultPolicy(), clientOptions{Log: true})
	opts := record.Options{
		Release:    c.String("release"),
		Generation: gen,
		Assets: assets.Options{
			Dir:        c.String("assets"),
			Lists:      c.StringSlice("asset-list"),
			Walk:       c.Bool("walk"),
			Exclude:    c.StringSlice("exclude"),
			PublicPath: c.String("public-path"),
			Workers:    c.Int("workers"),
			Logger:     inv.log,
		},
		NoGraph:             !c.Bool("asset-graph"),
		InstancePaths:       c.StringSlice("instance-path"),
		CDNPaths:            c.StringSlice("cdn-path"),
		CDNAndInstancePaths: c.StringSlice("cdn-and-instance-path"),
		CDN:                 c.StringSlice("cdn"),
		Origin:              c.String("origin"),
		ExpiresIn:           c.Duration("expires-in"),
		Registry:            registry.Options{Client: client, Logger: log},
		Logger:              log,
		Getenv:              inv.getenv,
	}
	if opts.Assets.Unlisted, err = assets.ParseUnlisted(c.String("unlisted")); err != nil {
		return opts, usage(fmt.Errorf("--%w", err))
	}
	if len(opts.Assets.Lists) > 0 && opts.Assets.Dir == "" {
		return opts, usage(fmt.Errorf("--asset-list needs --assets DIR, the directory its entries are relative to"))
	}
	for _, s := range c.StringSlice("image") {
		im, err := record.ParseImage(s)
		if err != nil {
			return opts, usage(fmt.Errorf("--image %w", err))
		}
		opts.Images = append(opts.Images, im)
	}
	if s := sourceOverride(c, inv); s != nil {
		opts.Source = s
	}
	if err := recordPrevious(ctx, c, inv, &opts); err != nil {
		return opts, err
	}
	opts.AllowMoved = c.StringSlice("allow-moved-tag")
	if c.Bool("embed-signatures") {
		v, err := imageVerifierFromFlags(ctx, c, inv, nil, []remote.Option{remote.WithTransport(client.Transport())})
		if err != nil {
			return opts, err
		}
		opts.Embed = v.Embed
	}
	if err := recordProvenance(ctx, c, inv, &opts, []remote.Option{remote.WithTransport(client.Transport())}); err != nil {
		return opts, err
	}
	return opts, nil
}

// recordProvenance reads --require-provenance and --embed-attestations:
// the release's source must be known (from GitHub Actions or the
// --source-* flags) before anything is pinned.
func recordProvenance(ctx context.Context, c flagValues, inv *invocation, opts *record.Options, ropts []remote.Option) error {
	if !c.Bool("require-provenance") && !c.Bool("embed-attestations") {
		if c.IsSet("provenance-key") {
			return usage(errors.New("--provenance-key needs --require-provenance"))
		}
		return nil
	}
	src := opts.Source
	if src == nil {
		src = record.SourceFromEnv(inv.getenv)
	}
	if !src.Bindable() {
		return usage(errors.New("--require-provenance checks the provenance against the release's source repository and commit, and neither GitHub Actions nor the flags name them: pass --source-repository and --source-commit"))
	}
	v, err := provenanceVerifierFromFlags(ctx, c, inv, ropts)
	if err != nil {
		return err
	}
	opts.Provenance, opts.EmbedAttestations = v.Verify, c.Bool("embed-attestations")
	return nil
}

// recordPrevious reads --previous into opts: a manifest file, or the
// store's channel (record looks it up before pinning: record.Options.PreviousFrom).
func recordPrevious(ctx context.Context, c flagValues, inv *invocation, opts *record.Options) error {
	p := c.String("previous")
	switch {
	case p == "":
		if len(c.StringSlice("allow-moved-tag")) > 0 {
			return usage(errors.New("--allow-moved-tag needs --previous FILE|store"))
		}
		return nil
	case p != "store":
		m, _, err := manifest.ReadFile(p)
		if err != nil {
			return inputError("--previous", err)
		}
		opts.Previous = m
		return nil
	case c.String("store") == "":
		return usage(errors.New("--previous store needs --store URL"))
	}
	st, err := inv.openStore(ctx, c.String("store"), nil)
	if err != nil {
		return err
	}
	opts.PreviousFrom = store.ChannelSource{Store: st, Release: opts.Release, Channel: c.String("channel"), Name: c.String("store")}
	return nil
}

// parseGeneration reads --generation: a positive integer.
func parseGeneration(s string) (int64, error) {
	if s == "" {
		return 0, usage(errors.New(`--generation is required: the release generation N (at least 1, higher than any before it), or "auto" for the next one on --store's channel`))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, usage(fmt.Errorf("--generation %q: want an integer of at least 1", s))
	}
	return n, nil
}

// sourceOverride is the build source from the --source-* flags, merged
// over the one from the environment; nil when no flag is given.
func sourceOverride(c flagValues, inv *invocation) *manifest.BuildSource {
	if !c.IsSet("source-repository") && !c.IsSet("source-commit") && !c.IsSet("source-ref") && !c.IsSet("source-run-url") {
		return nil
	}
	s := record.SourceFromEnv(inv.getenv)
	if s == nil {
		s = &manifest.BuildSource{}
	}
	for flag, field := range map[string]*string{"source-repository": &s.Repository, "source-commit": &s.Commit, "source-ref": &s.Ref, "source-run-url": &s.WorkflowRunURL} {
		if c.IsSet(flag) {
			*field = c.String(flag)
		}
	}
	return s
}

// renderRecorded says where the manifest went (stderr) and renders the
// result on stdout in format: its digest once written to a file, else the
// manifest.
func renderRecorded(stdout io.Writer, format string, inv *invocation, res *record.Result) error {
	if m := res.Manifest; res.Path != "" {
		inv.log.Info("wrote the manifest", "release", m.ID(), "file", res.Path, "digest", res.Digest.String(),
			"images", len(m.Images), "assets", len(m.Assets.Files), "signature", res.Signature)
	}
	if format == "json" {
		return res.WriteJSON(stdout)
	}
	return res.Write(stdout, termbar.IsTerminal(stdout))
}
