package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/manifest"
)

func manifestCommand() *cli.Command {
	return group("manifest", "validate, digest, show, diff and verify release manifests", manifestSubcommands()...)
}

// manifestSubcommands are the subcommands of `lockstep manifest`.
func manifestSubcommands() []*cli.Command {
	return []*cli.Command{
		manifestVerifyCommand(),
		manifestGetCommand(),
		{
			Name:      "validate",
			Usage:     "check a manifest strictly: exit 0 valid, 2 invalid (the field is named)",
			ArgsUsage: "FILE",
			Flags:     []cli.Flag{formatFlag("text", "json")},
			Action:    manifestValidate,
		},
		{
			Name:      "digest",
			Usage:     "print a manifest's digest, the SHA-256 of its canonical encoding",
			ArgsUsage: "FILE",
			Action:    manifestDigest,
		},
		{
			Name:      "show",
			Usage:     "describe a manifest",
			ArgsUsage: "FILE",
			Flags: []cli.Flag{
				formatFlag("text", "json", "markdown"),
				&cli.BoolFlag{Name: "files", Usage: "list every asset (text and markdown; json always does)"},
			},
			Action: manifestShow,
		},
		{
			Name:      "diff",
			Usage:     "compare two manifests of a release: exit 1 when NEW cannot follow OLD",
			ArgsUsage: "OLD NEW",
			Description: "Lists the images added, removed or re-pointed, the assets added, removed or changed, and the CDN\n" +
				"bases and origin that changed. Exits 1 when NEW cannot follow OLD: its generation does not rise, it is\n" +
				"another release, or an image tag moved (same repository and tag, another digest) and is not named by\n" +
				"--allow-moved-tag. With --exit-code, any change of images or assets exits 1 too, as git diff does.",
			Flags: []cli.Flag{
				formatFlag("text", "json", "markdown"),
				&cli.StringSliceFlag{Name: "allow-moved-tag", Usage: "accept a moved tag of the image `NAME` (repeatable)"},
				&cli.BoolFlag{Name: "exit-code", Usage: "exit 1 when the images or assets differ at all"},
			},
			Action: manifestDiff,
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

// loadManifestArg reads and parses a manifest file, or stdin for "-". A file
// that cannot be read is an input error.
func loadManifestArg(c *cli.Context, path string) (*manifest.Manifest, error) {
	var m *manifest.Manifest
	var err error
	if path == "-" {
		m, _, err = manifest.Read(c.App.Reader)
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

func manifestValidate(c *cli.Context) error {
	a, err := positional(c, "FILE")
	if err != nil {
		return err
	}
	f, err := format(c, "text", "json")
	if err != nil {
		return err
	}
	m, err := loadManifestArg(c, a[0])
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

func manifestDigest(c *cli.Context) error {
	a, err := positional(c, "FILE")
	if err != nil {
		return err
	}
	m, err := loadManifestArg(c, a[0])
	if err != nil {
		return err
	}
	d, err := m.Digest()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.App.Writer, d)
	return err
}

// showReport is manifest show's JSON shape: the digest, a showSummary, and the
// manifest itself in its canonical form.
type showReport struct {
	Digest   manifest.Digest `json:"digest"`
	Summary  showSummary     `json:"summary"`
	Manifest json.RawMessage `json:"manifest"`
}

type showSummary struct {
	Release    string `json:"release"`
	Generation int64  `json:"generation"`
	Images     int    `json:"images"`
	Platforms  int    `json:"platforms"`
	Files      int    `json:"files"`
	Bytes      int64  `json:"bytes"`
	Expired    bool   `json:"expired"`
}

func manifestShow(c *cli.Context) error {
	a, err := positional(c, "FILE")
	if err != nil {
		return err
	}
	f, err := format(c, "text", "json", "markdown")
	if err != nil {
		return err
	}
	m, err := loadManifestArg(c, a[0])
	if err != nil {
		return err
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	s := showReport{Digest: manifest.SHA256(b), Manifest: b, Summary: showSummary{
		Release: m.Release.Name, Generation: m.Release.Generation, Images: len(m.Images),
		Files: len(m.Assets.Files), Bytes: manifest.Bytes(m.Assets.Files), Expired: m.Expired(time.Now()),
	}}
	for _, im := range m.Images {
		s.Summary.Platforms += len(im.Platforms)
	}
	switch f {
	case "json":
		return jsonOut(c.App.Writer, s)
	case "markdown":
		return showMarkdown(c.App.Writer, m, s, c.Bool("files"))
	}
	return showText(c.App.Writer, m, s, c.Bool("files"))
}

func showText(w io.Writer, m *manifest.Manifest, s showReport, files bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	r := m.Release
	fmt.Fprintf(tw, "release\t%s\n", r.Name)
	fmt.Fprintf(tw, "generation\t%d\n", r.Generation)
	fmt.Fprintf(tw, "digest\t%s\n", s.Digest)
	fmt.Fprintf(tw, "created\t%s\n", r.CreatedAt.Format(time.RFC3339))
	if r.ExpiresAt != nil {
		exp := r.ExpiresAt.Format(time.RFC3339)
		if s.Summary.Expired {
			exp += " (expired)"
		}
		fmt.Fprintf(tw, "expires\t%s\n", exp)
	}
	if src := r.Source; src != nil {
		fmt.Fprintf(tw, "source\t%s\n", strings.TrimSpace(strings.Join([]string{src.Repository, src.Commit, src.Ref}, " ")))
		if src.WorkflowRunURL != "" {
			fmt.Fprintf(tw, "run\t%s\n", src.WorkflowRunURL)
		}
	}
	for _, im := range m.Images {
		fmt.Fprintf(tw, "image %s\t%s\n", im.Name, im.Ref)
		fmt.Fprintf(tw, "\t%s %s\n", im.Digest, im.MediaType)
		for _, p := range im.Platforms {
			fmt.Fprintf(tw, "\t%s %s config %s\n", p, p.Digest, p.Config)
		}
	}
	fmt.Fprintf(tw, "assets\t%d files, %d bytes\n", s.Summary.Files, s.Summary.Bytes)
	for _, base := range m.Assets.CDN {
		fmt.Fprintf(tw, "cdn\t%s\n", base)
	}
	if m.Assets.Origin != "" {
		fmt.Fprintf(tw, "origin\t%s\n", m.Assets.Origin)
	}
	if !m.Assets.Fingerprint.IsZero() {
		fmt.Fprintf(tw, "fingerprint\t%s\n", m.Assets.Fingerprint)
	}
	if files {
		for _, f := range m.Assets.Files {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", f.Path, f.Size, f.SHA256, f.ContentType)
		}
	}
	return tw.Flush()
}

// mdEscape escapes a value for a markdown table cell.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func showMarkdown(w io.Writer, m *manifest.Manifest, s showReport, files bool) error {
	var b strings.Builder
	r := m.Release
	fmt.Fprintf(&b, "### Release `%s` generation %d\n\n", mdEscape(r.Name), r.Generation)
	fmt.Fprintf(&b, "| | |\n| --- | --- |\n| Digest | `%s` |\n| Created | %s |\n", s.Digest, r.CreatedAt.Format(time.RFC3339))
	if r.ExpiresAt != nil {
		fmt.Fprintf(&b, "| Expires | %s |\n", r.ExpiresAt.Format(time.RFC3339))
	}
	if src := r.Source; src != nil {
		fmt.Fprintf(&b, "| Source | %s |\n", mdEscape(strings.TrimSpace(strings.Join([]string{src.Repository, src.Commit, src.Ref}, " "))))
		if src.WorkflowRunURL != "" {
			fmt.Fprintf(&b, "| Run | %s |\n", mdEscape(src.WorkflowRunURL))
		}
	}
	if len(m.Images) > 0 {
		b.WriteString("\n| Image | Reference | Digest | Platforms |\n| --- | --- | --- | --- |\n")
		for _, im := range m.Images {
			var ps []string
			for _, p := range im.Platforms {
				ps = append(ps, p.String())
			}
			fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s |\n", mdEscape(im.Name), mdEscape(im.Ref), im.Digest, strings.Join(ps, ", "))
		}
	}
	fmt.Fprintf(&b, "\n**Assets**: %d files, %d bytes", s.Summary.Files, s.Summary.Bytes)
	if !m.Assets.Fingerprint.IsZero() {
		fmt.Fprintf(&b, ", fingerprint `%s`", m.Assets.Fingerprint)
	}
	for _, base := range m.Assets.CDN {
		fmt.Fprintf(&b, "; CDN %s", mdEscape(base))
	}
	if m.Assets.Origin != "" {
		fmt.Fprintf(&b, "; origin %s", mdEscape(m.Assets.Origin))
	}
	b.WriteString("\n")
	if files && len(m.Assets.Files) > 0 {
		b.WriteString("\n| Path | Size | SHA-256 | Content type |\n| --- | ---: | --- | --- |\n")
		for _, f := range m.Assets.Files {
			fmt.Fprintf(&b, "| `%s` | %d | `%s` | %s |\n", mdEscape(f.Path), f.Size, f.SHA256, mdEscape(f.ContentType))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// diffReport is manifest diff's JSON shape: the changes, and the problems
// that refuse NEW after --allow-moved-tag.
type diffReport struct {
	*manifest.Changes
	Refusals []manifest.Problem `json:"refusals"`
	Refused  bool               `json:"refused"`
}

func manifestDiff(c *cli.Context) error {
	a, err := positional(c, "OLD", "NEW")
	if err != nil {
		return err
	}
	f, err := format(c, "text", "json", "markdown")
	if err != nil {
		return err
	}
	old, err := loadManifestArg(c, a[0])
	if err != nil {
		return fmt.Errorf("OLD %s: %w", a[0], err)
	}
	new, err := loadManifestArg(c, a[1])
	if err != nil {
		return fmt.Errorf("NEW %s: %w", a[1], err)
	}
	ch := manifest.Diff(old, new)
	r := diffReport{Changes: ch, Refusals: ch.Refusals(c.StringSlice("allow-moved-tag")...)}
	r.Refused = len(r.Refusals) > 0
	switch f {
	case "json":
		err = jsonOut(c.App.Writer, r)
	case "markdown":
		err = diffMarkdown(c.App.Writer, r)
	default:
		err = diffText(c.App.Writer, r)
	}
	if err != nil {
		return err
	}
	if r.Refused {
		var why []string
		for _, p := range r.Refusals {
			why = append(why, p.Message)
		}
		return refused(fmt.Errorf("%s cannot follow %s: %s", a[1], a[0], strings.Join(why, "; ")))
	}
	if c.Bool("exit-code") && ch.Differs() {
		return refused(nil)
	}
	return nil
}

// diffLines renders the changes as lines, shared by text and markdown.
func diffLines(r diffReport) []string {
	var out []string
	o, n := r.Old, r.New
	out = append(out, fmt.Sprintf("%s: generation %d → %d (%s → %s)", n.Release, o.Generation, n.Generation, o.Digest, n.Digest))
	for _, ic := range r.Images {
		switch ic.Change {
		case manifest.Added:
			out = append(out, fmt.Sprintf("+ image %s %s %s", ic.Name, ic.NewRef, ic.NewDigest))
		case manifest.Removed:
			out = append(out, fmt.Sprintf("- image %s %s %s", ic.Name, ic.OldRef, ic.OldDigest))
		default:
			line := fmt.Sprintf("~ image %s %s %s → %s %s", ic.Name, ic.OldRef, ic.OldDigest, ic.NewRef, ic.NewDigest)
			if ic.TagMoved {
				line += " (tag moved)"
			}
			out = append(out, line)
		}
	}
	as := r.Assets
	out = append(out, fmt.Sprintf("assets: %d added, %d removed, %d changed, %d unchanged", len(as.Added), len(as.Removed), len(as.Changed), as.Unchanged))
	if as.OldFingerprint != as.NewFingerprint {
		out = append(out, fmt.Sprintf("  fingerprint %s → %s", dashIfEmpty(as.OldFingerprint.String()), dashIfEmpty(as.NewFingerprint.String())))
	}
	for _, f := range as.Added {
		out = append(out, fmt.Sprintf("+ %s %d %s", f.Path, f.Size, f.SHA256))
	}
	for _, f := range as.Removed {
		out = append(out, fmt.Sprintf("- %s %d %s", f.Path, f.Size, f.SHA256))
	}
	for _, f := range as.Changed {
		out = append(out, fmt.Sprintf("~ %s %d %s → %d %s", f.Path, f.Old.Size, f.Old.SHA256, f.New.Size, f.New.SHA256))
	}
	for _, base := range as.CDNAdded {
		out = append(out, "+ cdn "+base)
	}
	for _, base := range as.CDNRemoved {
		out = append(out, "- cdn "+base)
	}
	if as.OldOrigin != as.NewOrigin {
		out = append(out, fmt.Sprintf("~ origin %s → %s", dashIfEmpty(as.OldOrigin), dashIfEmpty(as.NewOrigin)))
	}
	for _, p := range r.Problems {
		verdict := "refused"
		if !containsProblem(r.Refusals, p) {
			verdict = "allowed"
		}
		out = append(out, fmt.Sprintf("%s: %s: %s", verdict, p.Kind, p.Message))
	}
	return out
}

func containsProblem(ps []manifest.Problem, p manifest.Problem) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func diffText(w io.Writer, r diffReport) error {
	_, err := io.WriteString(w, strings.Join(diffLines(r), "\n")+"\n")
	return err
}

func diffMarkdown(w io.Writer, r diffReport) error {
	var b strings.Builder
	verdict := "NEW can follow OLD"
	if r.Refused {
		verdict = "**refused**"
	}
	fmt.Fprintf(&b, "### Manifest diff: `%s` generation %d → %d, %s\n\n```diff\n", mdEscape(r.New.Release), r.Old.Generation, r.New.Generation, verdict)
	b.WriteString(strings.Join(diffLines(r), "\n"))
	b.WriteString("\n```\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func jsonOut(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
