package app

import (
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

func cdnCommand() *cli.Command {
	def := transport.DefaultPolicy()
	return group("cdn", "check a release's assets on its CDN", &cli.Command{
		Name:      "check",
		Usage:     "check that every asset of the manifest is on every CDN base, byte for byte",
		ArgsUsage: " ",
		Description: "For every asset and CDN base: a HEAD (a ranged GET where HEAD is refused) must give 200, the recorded\n" +
			"size and, where the CDN states one (x-amz-checksum-sha256, a SHA-256 ETag, Digest, Repr-Digest), the\n" +
			"recorded hash; --full downloads and hashes every byte. The report says of each asset, and in its summary,\n" +
			"whether the bytes, a checksum header or only the size were compared; --require-content makes size only\n" +
			"a failure. Exit 0 all present, 1 any missing, wrong, looping or TLS-failing asset, 2 bad input (an origin\n" +
			"that is the CDN), 3 the CDN could not be checked (or, with --require-content, only sizes were).",
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
		Action: cdnCheck,
	})
}

func cdnCheck(c *cli.Context) error {
	f, err := format(c, cdn.Formats...)
	if err != nil {
		return err
	}
	opts, err := cdnOptionsFromFlags(c)
	if err != nil {
		return err
	}
	src, err := anySourceFromFlags(c)
	if err != nil {
		return err
	}
	signed, err := src.Fetch(c.Context)
	if err != nil {
		return inputError("--manifest", err)
	}
	if len(signed.Manifest.Assets.Files) == 0 {
		opts.Logger.Warn("the manifest lists no assets: nothing to check", "manifest", signed.Location)
	}
	rep, err := cdn.Check(c.Context, signed.Manifest.Assets, opts)
	if err != nil {
		return err
	}
	if err := rep.Write(c.App.Writer, f, Version); err != nil {
		return err
	}
	return rep.Err()
}

// cdnOptionsFromFlags checks cdn check's flags and turns them into
// cdn.Options, with a client whose per-host cap is --concurrency.
func cdnOptionsFromFlags(c *cli.Context) (cdn.Options, error) {
	if c.NArg() > 0 {
		return cdn.Options{}, usage(fmt.Errorf("cdn check takes no arguments, got %q", c.Args().First()))
	}
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
		Client:         newClient(c, p, clientOptions{Log: true}),
		Full:           c.Bool("full"),
		RequireContent: c.Bool("require-content"),
		Sample:         c.Int("sample"),
		Seed:           c.Uint64("seed"),
		Concurrency:    c.Int("concurrency"),
		Origin:         c.String("origin"),
		IgnoreETag:     c.Bool("ignore-etag"),
		TLSWarn:        c.Duration("tls-warn"),
		Logger:         logger(c),
		Progress:       progress(c, "checking assets"),
	}, nil
}

// progress returns a progress callback drawing a bar on stderr when
// stderr is a terminal, or nil.
func progress(c *cli.Context, what string) func(done, total int) {
	fd, ok := c.App.ErrWriter.(*os.File)
	if !ok || !term.IsTerminal(int(fd.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(fd), progressbar.OptionSetDescription(what),
				progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		bar.Set(done)
	}
}
