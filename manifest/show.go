package manifest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// Description is what `lockstep manifest show` says of a manifest: its
// digest, a Summary, and the manifest itself in its canonical encoding.
// Its JSON is show's json format, documented in docs/record.md (Inspecting manifests).
type Description struct {
	Digest   Digest          `json:"digest"`
	Summary  Summary         `json:"summary"`
	Manifest json.RawMessage `json:"manifest"`
	m        *Manifest
}

// Summary counts what a manifest holds.
type Summary struct {
	Release    string `json:"release"`
	Generation int64  `json:"generation"`
	Images     int    `json:"images"`
	Platforms  int    `json:"platforms"`
	Files      int    `json:"files"`
	Bytes      int64  `json:"bytes"`
	// Expired: the manifest's expiresAt is before now.
	Expired bool `json:"expired"`
}

// Describe describes m as of now (for Summary.Expired). Its error is
// Encode's.
func Describe(m *Manifest, now time.Time) (*Description, error) {
	b, err := m.Encode()
	if err != nil {
		return nil, err
	}
	s := &Description{Digest: SHA256(b), Manifest: b, m: m, Summary: Summary{
		Release: m.Release.Name, Generation: m.Release.Generation, Images: len(m.Images),
		Files: len(m.Assets.Files), Bytes: Bytes(m.Assets.Files), Expired: m.Expired(now),
	}}
	for _, im := range m.Images {
		s.Summary.Platforms += len(im.Platforms)
	}
	return s, nil
}

// ReportFormats are the formats Description.Write and DiffReport.Write
// take.
var ReportFormats = []string{"text", "json", "markdown"}

// Write renders the description in format: "text" (aligned, for people),
// "json" (the Description, indented) or "markdown" (for a GitHub job
// summary). files lists every asset in text and markdown (json always
// does: it holds the manifest).
func (s *Description) Write(w io.Writer, format string, files bool) error {
	switch format {
	case "text":
		return s.writeText(w, files)
	case "json":
		return report.WriteJSON(w, s, true)
	case "markdown":
		return s.writeMarkdown(w, files)
	}
	return report.UnknownFormat(format, ReportFormats)
}

func (s *Description) writeText(w io.Writer, files bool) error {
	m := s.m
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

func (s *Description) writeMarkdown(w io.Writer, files bool) error {
	m := s.m
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

// DigestReport is what `lockstep manifest digest` says: the digest of a
// manifest's canonical encoding, and whose it is.
type DigestReport struct {
	Digest     Digest `json:"digest"`
	Release    string `json:"release"`
	Generation int64  `json:"generation"`
}

// Write renders r in format: "text" (the digest alone, a line) or "json".
func (r DigestReport) Write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	_, err := fmt.Fprintln(w, r.Digest)
	return err
}
