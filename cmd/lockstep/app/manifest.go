package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/manifest"
)

func manifestCommand(inv *invocation) *cli.Command {
	return group("manifest", "validate, digest, show, diff and verify release manifests",
		describe("Commands over release manifest files (validate, digest, show, diff) and their signatures\n"+
			"(verify), and get, which fetches the manifest a store's channel names, verified.",
			[]string{
				"lockstep manifest validate release.json",
				"lockstep manifest diff previous.json release.json",
				"lockstep manifest verify --key cosign.pub release.json",
			},
			groupExits("manifest")),
		manifestSubcommands(inv)...)
}

// manifestSubcommands are the subcommands of `lockstep manifest`.
func manifestSubcommands(inv *invocation) []*cli.Command {
	return []*cli.Command{
		manifestVerifyCommand(inv),
		manifestGetCommand(inv),
		{
			Name:      "validate",
			Usage:     "check a manifest strictly: exit 0 valid, 2 invalid (the field is named)",
			ArgsUsage: "FILE",
			Description: describe("Decodes FILE strictly: unknown fields, duplicate keys, trailing data, a bad digest or an\n"+
				"unknown apiVersion are errors, each naming its field. Nothing is fetched.",
				[]string{
					"lockstep manifest validate release.json",
					"lockstep manifest validate --format json release.json",
				},
				exits{
					0: "valid",
					2: "invalid (the field is named) or unreadable",
				}),
			Flags:  []cli.Flag{formatFlag("text", "json")},
			Action: inv.act(manifestValidate),
		},
		{
			Name:      "digest",
			Usage:     "print a manifest's digest, the SHA-256 of its canonical encoding",
			ArgsUsage: "FILE",
			Description: describe("Prints sha256:HEX, the SHA-256 of FILE's canonical encoding (docs/manifest-format.md), which\n"+
				"does not change with FILE's whitespace or key order.",
				[]string{
					"lockstep manifest digest release.json",
					"lockstep manifest digest build/release.json",
				},
				exits{
					0: "printed",
					2: "FILE is not a valid manifest, or unreadable",
				}),
			Flags:  []cli.Flag{formatFlag("text", "json")},
			Action: inv.act(manifestDigest),
		},
		{
			Name:      "show",
			Usage:     "describe a manifest",
			ArgsUsage: "FILE",
			Description: describe("Prints the release, generation, digest, source, expiry, images (with their platforms'\n"+
				"and configs' digests), the asset count and size, CDN bases and origin; --files lists every asset.",
				[]string{
					"lockstep manifest show release.json",
					"lockstep manifest show --files --format markdown release.json",
					"lockstep manifest show --format json release.json",
				},
				exits{
					0: "shown",
					2: "FILE is not a valid manifest, or unreadable",
				}),
			Flags: []cli.Flag{
				formatFlag("text", "json", "markdown"),
				&cli.BoolFlag{Name: "files", Usage: "list every asset (text and markdown; json always does)"},
			},
			Action: inv.act(manifestShow),
		},
		{
			Name:      "diff",
			Usage:     "compare two manifests of a release: exit 1 when NEW cannot follow OLD",
			ArgsUsage: "OLD NEW",
			Description: describe("Lists the images added, removed or re-pointed, the assets added, removed or changed, and the CDN\n"+
				"bases and origin that changed. Exits 1 when NEW cannot follow OLD: its generation does not rise, it is\n"+
				"another release, or an image tag moved (same repository and tag, another digest) and is not named by\n"+
				"--allow-moved-tag. With --exit-code, any change of images or assets exits 1 too, as git diff does.",
				[]string{
					"lockstep manifest diff previous.json release.json",
					"lockstep manifest diff --allow-moved-tag web --format markdown previous.json release.json",
					"lockstep manifest diff --exit-code previous.json release.json",
				},
				exits{
					0: "NEW can follow OLD (and, with --exit-code, no image or asset changed)",
					1: "NEW cannot follow OLD (a generation that does not rise, another release, a moved tag), or, with " +
						"--exit-code, the images or assets differ",
					2: "a bad flag, or a manifest that is not valid",
				}),
			Flags: []cli.Flag{
				formatFlag("text", "json", "markdown"),
				&cli.StringSliceFlag{Name: "allow-moved-tag", Usage: "accept a moved tag of the image `NAME` (repeatable)"},
				&cli.BoolFlag{Name: "exit-code", Usage: "exit 1 when the images or assets differ at all"},
			},
			Action: inv.act(manifestDiff),
		},
	}
}

// positional returns the command's n positional arguments, or a usage error.
func positional(c *cli.Context, names ...string) ([]string, error) {
	if c.NArg() != len(names) {
		return nil, usage(fmt.Errorf("want %s, got %d argument(s); see 'lockstep %s --help'", strings.Join(names, " "), c.NArg(), c.Command.FullName()))
	}
	return c.Args().Slice(), nil
}

// loadManifestArg reads and parses a manifest file, or stdin (the app's
// Reader) for "-". A file that cannot be read is an input error.
func loadManifestArg(stdin io.Reader, path string) (*manifest.Manifest, error) {
	var m *manifest.Manifest
	var err error
	if path == "-" {
		m, _, err = manifest.Read(stdin)
	} else {
		m, _, err = manifest.ReadFile(path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, usage(err)
	}
	return m, err
}

// validateReport is manifest validate's JSON shape.
type validateReport struct {
	File       string `json:"file"`
	Valid      bool   `json:"valid"`
	Release    string `json:"release,omitempty"`
	Generation int64  `json:"generation,omitempty"`
	Digest     string `json:"digest,omitempty"`
	// Field and Reason say what is invalid.
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func manifestValidate(c *cli.Context, inv *invocation) error {
	a, err := positional(c, "FILE")
	if err != nil {
		return err
	}
	f, err := format(c, "text", "json")
	if err != nil {
		return err
	}
	m, err := loadManifestArg(c.App.Reader, a[0])
	var ve *manifest.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return err
	}
	v := validateReport{File: a[0], Valid: err == nil}
	if ve != nil {
		v.Field, v.Reason = ve.Field, ve.Reason
	} else {
		d, _ := m.Digest()
		v.Release, v.Generation, v.Digest = m.Release.Name, m.Release.Generation, d.String()
	}
	switch {
	case f == "json":
		if werr := jsonOut(c.App.Writer, v); werr != nil {
			return werr
		}
	case v.Valid:
		fmt.Fprintf(c.App.Writer, "%s: valid: %s, %s\n", v.File, m.ID(), v.Digest)
	}
	if ve != nil {
		return usage(err)
	}
	return nil
}

func manifestDigest(c *cli.Context, inv *invocation) error {
	f, err := format(c, "text", "json")
	if err != nil {
		return err
	}
	a, err := positional(c, "FILE")
	if err != nil {
		return err
	}
	m, err := loadManifestArg(c.App.Reader, a[0])
	if err != nil {
		return err
	}
	d, err := m.Digest()
	if err != nil {
		return err
	}
	return manifest.DigestReport{Digest: d, Release: m.Release.Name, Generation: m.Release.Generation}.Write(c.App.Writer, f)
}

func manifestShow(c *cli.Context, inv *invocation) error {
	a, err := positional(c, "FILE")
	if err != nil {
		return err
	}
	f, err := format(c, "text", "json", "markdown")
	if err != nil {
		return err
	}
	m, err := loadManifestArg(c.App.Reader, a[0])
	if err != nil {
		return err
	}
	s, err := manifest.Describe(m, time.Now())
	if err != nil {
		return err
	}
	return s.Write(c.App.Writer, f, c.Bool("files"))
}

func manifestDiff(c *cli.Context, inv *invocation) error {
	a, err := positional(c, "OLD", "NEW")
	if err != nil {
		return err
	}
	f, err := format(c, "text", "json", "markdown")
	if err != nil {
		return err
	}
	old, new, err := loadOldNew(c.App.Reader, a[0], a[1])
	if err != nil {
		return err
	}
	ch := manifest.Diff(old, new)
	r := ch.Report(c.StringSlice("allow-moved-tag")...)
	if err := r.Write(c.App.Writer, f); err != nil {
		return err
	}
	if r.Refused {
		return refused(fmt.Errorf("%s cannot follow %s: %s", a[1], a[0], r.Why()))
	}
	if c.Bool("exit-code") && ch.Differs() {
		return refused(nil)
	}
	return nil
}

// loadOldNew reads diff's OLD and NEW manifests (loadManifestArg), each
// error naming which.
func loadOldNew(stdin io.Reader, oldPath, newPath string) (old, new *manifest.Manifest, err error) {
	if old, err = loadManifestArg(stdin, oldPath); err != nil {
		return nil, nil, fmt.Errorf("OLD %s: %w", oldPath, err)
	}
	if new, err = loadManifestArg(stdin, newPath); err != nil {
		return nil, nil, fmt.Errorf("NEW %s: %w", newPath, err)
	}
	return old, new, nil
}

func jsonOut(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
