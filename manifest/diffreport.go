package manifest

import (
	"fmt"
	"io"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// DiffReport is what `lockstep manifest diff` says: the changes, and the
// problems that still refuse the new manifest once the allowed moved tags
// are accepted. Its JSON is diff's json format, documented in docs/record.md (Inspecting manifests).
type DiffReport struct {
	*Changes
	Refusals []Problem `json:"refusals"`
	Refused  bool      `json:"refused"`
}

// Report is the report of the changes, with the moved tags of the images
// named by allowMovedTag accepted (see Refusals).
func (c *Changes) Report(allowMovedTag ...string) *DiffReport {
	r := &DiffReport{Changes: c, Refusals: c.Refusals(allowMovedTag...)}
	r.Refused = len(r.Refusals) > 0
	return r
}

// Why is what refuses the new manifest: the refusals' messages, joined by
// "; " (empty when none does).
func (r *DiffReport) Why() string {
	why := make([]string, len(r.Refusals))
	for i, p := range r.Refusals {
		why[i] = p.Message
	}
	return strings.Join(why, "; ")
}

// Write renders the report in format: "text" (a line per change, +, - or
// ~, then each problem refused or allowed), "json" (the DiffReport,
// indented) or "markdown" (the text lines in a diff block, under a
// heading with the verdict).
func (r *DiffReport) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return r.writeText(w)
	case "json":
		return report.WriteJSON(w, r, true)
	case "markdown":
		return r.writeMarkdown(w)
	}
	return report.UnknownFormat(format, ReportFormats)
}

// lines renders the changes as lines, shared by text and markdown.
func (r *DiffReport) lines() []string {
	var out []string
	o, n := r.Old, r.New
	out = append(out, fmt.Sprintf("%s: generation %d → %d (%s → %s)", n.Release, o.Generation, n.Generation, o.Digest, n.Digest))
	for _, ic := range r.Images {
		switch ic.Change {
		case Added:
			out = append(out, fmt.Sprintf("+ image %s %s %s", ic.Name, ic.NewRef, ic.NewDigest))
		case Removed:
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

func containsProblem(ps []Problem, p Problem) bool {
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

func (r *DiffReport) writeText(w io.Writer) error {
	_, err := io.WriteString(w, strings.Join(r.lines(), "\n")+"\n")
	return err
}

func (r *DiffReport) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	verdict := "NEW can follow OLD"
	if r.Refused {
		verdict = "**refused**"
	}
	fmt.Fprintf(&b, "### Manifest diff: `%s` generation %d → %d, %s\n\n```diff\n", mdEscape(r.New.Release), r.Old.Generation, r.New.Generation, verdict)
	b.WriteString(strings.Join(r.lines(), "\n"))
	b.WriteString("\n```\n")
	_, err := io.WriteString(w, b.String())
	return err
}
