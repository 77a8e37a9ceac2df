package fleet

import (
	"bytes"
	"context"
	"io"
	"log/slog"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/manifest"
)

// RunOptions configure Run: where the targets come from, how they are
// checked, and where the report goes.
type RunOptions struct {
	// Specs name the targets (see Discover); Discover finds them.
	Specs    []string
	Discover DiscoverOptions
	// Check configures the check of each target.
	Check Options
	// ReportFile, if set, receives the JSON report, written atomically
	// before Run returns.
	ReportFile string
}

// Run is `lockstep fleet check` as one call: it discovers the targets,
// checks them against m and writes the JSON report to ReportFile. Its
// error is Discover's (a *SpecError for a spec that cannot be read), the
// report file's, or Check's; the report is returned with Check's error
// (a *verdict.MismatchError or *verdict.UnavailableError) and is nil with
// the others.
func Run(ctx context.Context, m *manifest.Signed, o RunOptions) (*Report, error) {
	targets, err := Discover(ctx, o.Specs, o.Discover)
	if err != nil {
		return nil, err
	}
	log := o.Check.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Info("checking the fleet", "instances", len(targets), "release", m.Manifest.ID())
	r, checkErr := Check(ctx, m, targets, o.Check)
	if r == nil {
		return nil, checkErr
	}
	if o.ReportFile != "" {
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(o.ReportFile, b.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return r, checkErr
}

// Write renders the report in format: "json", "markdown", "sarif", or
// text for anything else.
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		return r.WriteJSON(w)
	case "markdown":
		return r.WriteMarkdown(w)
	case "sarif":
		return r.WriteSARIF(w)
	}
	return r.WriteText(w)
}
