package store

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// Formats are the formats StatusReport.Write and GCReport.Write take.
var Formats = report.TextJSON

// Write renders the report in format: "text" (aligned, for people: the
// channel, then its history) or "json" (the report, indented).
func (r *StatusReport) Write(w io.Writer, format string) error {
	return report.Render(w, format, r, r.writeText)
}

func (r *StatusReport) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "release\t%s\n", r.Release)
	fmt.Fprintf(tw, "channel\t%s\n", r.Channel)
	fmt.Fprintf(tw, "generation\t%d\n", r.Generation)
	fmt.Fprintf(tw, "digest\t%s\n", r.Digest)
	fmt.Fprintf(tw, "moved\t%s by %s\n", r.MovedAt.Format(time.RFC3339), or(r.MovedBy, "unknown"))
	fmt.Fprintf(tw, "created\t%s\n", r.CreatedAt.Format(time.RFC3339))
	if r.ExpiresAt != nil {
		fmt.Fprintf(tw, "expires\t%s\n", r.ExpiresAt.Format(time.RFC3339))
	}
	signed := "no"
	if r.Signed {
		signed = "yes"
	}
	fmt.Fprintf(tw, "signed\t%s\n", signed)
	if r.Source != nil && r.Source.Commit != "" {
		fmt.Fprintf(tw, "commit\t%s %s\n", r.Source.Repository, r.Source.Commit)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.History) == 0 {
		return nil
	}
	fmt.Fprintln(w, "history:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, h := range r.History {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", h.Generation, h.Digest, h.MovedAt.Format(time.RFC3339), or(h.MovedBy, "unknown"))
	}
	return tw.Flush()
}

// Write renders the report in format: "text" (a line per manifest deleted
// or kept, with why, and how to delete after a dry run) or "json".
func (r *GCReport) Write(w io.Writer, format string) error {
	return report.Render(w, format, r, r.writeText)
}

func (r *GCReport) writeText(w io.Writer) error {
	verb := report.Deletion(r.DryRun)
	for _, e := range r.Deleted {
		fmt.Fprintf(w, "%s %s generation %d\n", verb, e.Digest, e.Generation)
	}
	for _, e := range r.Kept {
		fmt.Fprintf(w, "kept %s generation %d: %s\n", e.Digest, e.Generation, e.Reason)
	}
	return report.DryRunHint(w, r.DryRun, len(r.Deleted))
}

// or is s, or alt when s is blank.
func or(s, alt string) string {
	if strings.TrimSpace(s) == "" {
		return alt
	}
	return s
}
