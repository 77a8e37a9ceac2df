package app

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/termbar"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/record"
)

func recordCommand() *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "pin a release's images, hash its assets, and write its manifest",
		UsageText: "lockstep record --release NAME --generation N --image NAME=REF... --assets DIR --cdn URL... [--output FILE]",
		Description: "Every --image is resolved (a tag to its digest; a reference by digest for its platforms and config\n" +
			"digests), every file under --assets (or named by --asset-list) is hashed, and the canonical manifest is\n" +
			"written to --output atomically (its digest then goes to stdout), or to stdout. Nothing is written on failure.",
		Flags:  recordFlags(),
		Action: recordAction,
	}
}

// recordFlags are record's flags; later flags (--check-cdn, --sign-key)
// join this list.
func recordFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "release", Usage: "the release (service) `NAME` (required)", EnvVars: []string{"LOCKSTEP_RELEASE"}},
		&cli.StringFlag{Name: "generation", Usage: "the release generation `N` (required): at least 1, higher than any before it"},
		&cli.StringSliceFlag{Name: "image", Usage: "an image of the release, `NAME=REF` (repeatable)"},
		&cli.StringFlag{Name: "assets", Usage: "the `DIR` the CDN serves; every file in it is hashed"},
		&cli.StringSliceFlag{Name: "asset-list", Usage: "a Vite (.vite/manifest.json) or webpack assets manifest `FILE` naming the assets to hash, instead of walking --assets (repeatable)"},
		&cli.BoolFlag{Name: "walk", Usage: "with --asset-list, also hash every file under --assets"},
		&cli.StringSliceFlag{Name: "exclude", Usage: "leave out of the walk the files or directories whose path or name matches `PATTERN` (path.Match; repeatable; each is logged)"},
		&cli.StringFlag{Name: "public-path", Usage: "a `PREFIX` that --asset-list entries carry and paths under --assets do not (webpack's publicPath)"},
		&cli.StringSliceFlag{Name: "cdn", Usage: "a CDN base `URL` the assets are served under (repeatable)"},
		&cli.StringFlag{Name: "origin", Usage: "the CDN's origin base `URL`"},
		&cli.DurationFlag{Name: "expires-in", Usage: "set the manifest's expiry this `DURATION` after its creation (e.g. 720h)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the manifest to `FILE` (atomically) instead of stdout"},
		&cli.StringFlag{Name: "source-repository", Usage: "the repository the release was built from (default: from GITHUB_SERVER_URL and GITHUB_REPOSITORY)"},
		&cli.StringFlag{Name: "source-commit", Usage: "the commit (default: GITHUB_SHA)"},
		&cli.StringFlag{Name: "source-ref", Usage: "the ref (default: GITHUB_REF)"},
		&cli.StringFlag{Name: "source-run-url", Usage: "the CI run URL (default: the GitHub Actions workflow run)"},
		&cli.IntFlag{Name: "workers", Usage: "hash `N` files at once (default: one per CPU)"},
	}
}

func recordAction(c *cli.Context) error {
	opts, err := recordOptions(c)
	if err != nil {
		return err
	}
	bar := termbar.Bytes(c.App.ErrWriter, "hashing assets")
	if bar != nil {
		opts.Assets.Progress = bar.Set
	}
	m, err := record.Manifest(c.Context, opts)
	bar.Finish()
	var ae *assets.Error
	if errors.As(err, &ae) {
		return usage(err)
	}
	if err != nil {
		return err
	}
	return writeRecorded(c, m, c.String("output"))
}

// recordOptions turns record's flags into the library's options.
func recordOptions(c *cli.Context) (record.Options, error) {
	// Flags are not marked Required: urfave/cli reports a missing one as
	// a plain error, which would not exit 2.
	if c.String("release") == "" {
		return record.Options{}, usage(fmt.Errorf("--release NAME is required"))
	}
	gen, err := parseGeneration(c.String("generation"))
	if err != nil {
		return record.Options{}, err
	}
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
			Logger:     logger(c),
		},
		CDN:       c.StringSlice("cdn"),
		Origin:    c.String("origin"),
		ExpiresIn: c.Duration("expires-in"),
		Logger:    logger(c),
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
	if s := sourceOverride(c); s != nil {
		opts.Source = s
	}
	return opts, nil
}

// parseGeneration reads --generation: a positive integer.
func parseGeneration(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, usage(fmt.Errorf("--generation %q: want an integer of at least 1", s))
	}
	return n, nil
}

// sourceOverride is the build source from the --source-* flags, merged
// over the one from the environment; nil when no flag is given.
func sourceOverride(c *cli.Context) *manifest.BuildSource {
	if !c.IsSet("source-repository") && !c.IsSet("source-commit") && !c.IsSet("source-ref") && !c.IsSet("source-run-url") {
		return nil
	}
	s := record.SourceFromEnv(os.Getenv)
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

// writeRecorded writes m's canonical encoding to path atomically, and its
// digest to stdout; or, with no path, the encoding to stdout.
func writeRecorded(c *cli.Context, m *manifest.Manifest, path string) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	d := manifest.SHA256(b)
	if path == "" {
		if termbar.IsTerminal(c.App.Writer) {
			b = append(b, '\n') // for the prompt; a pipe or file gets the exact bytes
		}
		_, err := c.App.Writer.Write(b)
		return err
	}
	if err := atomicfile.Write(path, b, 0o644); err != nil {
		return err
	}
	logger(c).Info("wrote the manifest", "release", m.ID(), "file", path, "digest", d.String(),
		"images", len(m.Images), "assets", len(m.Assets.Files))
	_, err = fmt.Fprintln(c.App.Writer, d)
	return err
}
