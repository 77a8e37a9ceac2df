package pin

import (
	"io"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// Formats are the formats Write takes.
var Formats = []string{"text", "json"}

// Write renders the report in format: "text" (each image's pinned form,
// repo:tag@sha256:…, one a line: what pins again to itself) or "json" (the
// Report, every digest, as documented in docs/pin.md).
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		var b strings.Builder
		for _, im := range r.Images {
			b.WriteString(im.Pinned)
			b.WriteByte('\n')
		}
		_, err := io.WriteString(w, b.String())
		return err
	case "json":
		return report.WriteJSON(w, r, false)
	}
	return report.UnknownFormat(format, Formats)
}
