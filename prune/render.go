package prune

import (
	"fmt"
	"io"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// Formats are the formats Report.Write takes.
var Formats = report.TextJSON

// Write renders the report in format: "text" (a line per object missing,
// deleted or kept, with why, and how to delete after a dry run) or "json"
// (the report, indented).
func (r *Report) Write(w io.Writer, format string) error {
	return report.Render(w, format, r, r.writeText)
}

func (r *Report) writeText(w io.Writer) error {
	verb := report.Deletion(r.DryRun)
	for _, e := range r.Missing {
		fmt.Fprintf(w, "missing %s of kept generation(s) %v\n", e.Key, e.Generations)
	}
	for _, e := range r.Deleted {
		fmt.Fprintf(w, "%s %s (%d bytes) of generation(s) %v\n", verb, e.Key, e.Size, e.Generations)
	}
	for _, e := range r.Kept {
		fmt.Fprintf(w, "kept %s: %s\n", e.Key, e.Reason)
	}
	return report.DryRunHint(w, r.DryRun, len(r.Deleted))
}
