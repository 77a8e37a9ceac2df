package fleet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
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
	empty := emptySpecs(o.Specs, targets)
	if len(empty) > 0 && len(targets) > 0 {
		log.Warn("a target found no instances", "targets", strings.Join(empty, " "), "hint", noneHint(empty))
	}
	r, checkErr := Check(ctx, m, targets, o.Check)
	if r == nil {
		return nil, checkErr
	}
	if len(targets) == 0 && len(empty) > 0 && verdict.IsUnavailable(checkErr) {
		checkErr = verdict.Unavailable("fleet", fmt.Errorf("no instances to check: %s found none (%s)", strings.Join(empty, ", "), noneHint(empty)))
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

// emptySpecs are the specs that added no target (a target found by two
// specs counts for the first).
func emptySpecs(specs []string, targets []Target) []string {
	found := map[string]bool{}
	for _, t := range targets {
		found[t.Spec] = true
	}
	var out []string
	for _, s := range specs {
		if !found[s] && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// noneHint says why specs may find nothing.
func noneHint(specs []string) string {
	for _, s := range specs {
		if strings.HasPrefix(s, "k8s:") {
			return "a namespace that does not exist lists no pods, as does a selector that matches none; only running pods count"
		}
	}
	return "an empty group, service or file"
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
