package fleet

import (
	"io"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// RuleUnreachable is the SARIF rule of an instance without a usable status.
const RuleUnreachable = "unreachable"

var sarifRules = []report.Rule{
	{ID: DiffImage, ShortDescription: report.Message{Text: "The instance runs an image digest that is not the release's for its platform."}, DefaultConfiguration: &report.Config{Level: report.LevelError}},
	{ID: DiffAssets, ShortDescription: report.Message{Text: "The instance serves asset IDs that the release manifest lacks."}, DefaultConfiguration: &report.Config{Level: report.LevelError}},
	{ID: DiffGeneration, ShortDescription: report.Message{Text: "The instance's agent checks against another manifest generation."}, DefaultConfiguration: &report.Config{Level: report.LevelError}},
	{ID: DiffManifest, ShortDescription: report.Message{Text: "The instance's agent checks against another manifest of the same generation."}, DefaultConfiguration: &report.Config{Level: report.LevelError}},
	{ID: DiffNotAdmitted, ShortDescription: report.Message{Text: "The instance's agent did not admit it."}, DefaultConfiguration: &report.Config{Level: report.LevelError}},
	{ID: RuleUnreachable, ShortDescription: report.Message{Text: "The instance's agent gave no usable status."}, DefaultConfiguration: &report.Config{Level: report.LevelWarning}},
}

// WriteSARIF writes the report as SARIF 2.1.0 (internal/report): one error
// result per difference of a divergent instance, one warning per
// unreachable one. Each result is located at the manifest (physical, when
// it has a location) and at the instance (logical, kind "resource", its
// fully qualified name the status URL).
func (r *Report) WriteSARIF(w io.Writer) error {
	s := report.NewSARIF("lockstep", "", "https://github.com/lockstep-dev/lockstep", sarifRules...)
	loc := func(in Instance) []report.Location {
		l := report.Location{LogicalLocations: []report.LogicalLocation{{Name: in.Name, FullyQualifiedName: in.Target, Kind: "resource"}}}
		if r.Manifest.Location != "" {
			l.PhysicalLocation = report.File(r.Manifest.Location, "").PhysicalLocation
		}
		return []report.Location{l}
	}
	for _, in := range r.Divergent {
		for _, d := range in.Differences {
			s.Add(d.Kind, "", in.Name+": "+d.Message, loc(in)...).PartialFingerprints = map[string]string{"instance/kind": in.Name + "/" + d.Kind}
		}
	}
	for _, in := range r.Unreachable {
		s.Add(RuleUnreachable, "", in.Name+": "+in.Problem.Kind+": "+in.Problem.Message, loc(in)...).PartialFingerprints = map[string]string{"instance/kind": in.Name + "/" + RuleUnreachable}
	}
	return s.Write(w)
}
