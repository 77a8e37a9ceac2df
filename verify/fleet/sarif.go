package fleet

import (
	"encoding/json"
	"io"
)

// A small local SARIF 2.1.0 writer. internal/report (the cdn area) is to
// hold the shared SARIF helpers; this one has the same shape, so it can move
// onto them.

type sarifLog struct {
	Version string     `json:"version"`
	Schema  string     `json:"$schema"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind"`
}

var sarifRules = []sarifRule{
	{DiffImage, sarifMessage{"The instance runs an image digest that is not the release's for its platform."}},
	{DiffAssets, sarifMessage{"The instance serves asset IDs that the release manifest lacks."}},
	{DiffGeneration, sarifMessage{"The instance's agent checks against another manifest generation."}},
	{DiffManifest, sarifMessage{"The instance's agent checks against another manifest of the same generation."}},
	{DiffNotAdmitted, sarifMessage{"The instance's agent did not admit it."}},
	{"unreachable", sarifMessage{"The instance's agent gave no usable status."}},
}

// WriteSARIF writes the report as SARIF 2.1.0: one error result per
// difference of a divergent instance, one warning per unreachable one.
// Each result is located at the manifest (physical) and the instance
// (logical, kind "resource").
func (r *Report) WriteSARIF(w io.Writer) error {
	loc := func(in Instance) []sarifLocation {
		l := sarifLocation{LogicalLocations: []sarifLogical{{Name: in.Name, FullyQualifiedName: in.Target, Kind: "resource"}}}
		if r.Manifest.Location != "" {
			l.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: r.Manifest.Location}}
		}
		return []sarifLocation{l}
	}
	results := []sarifResult{}
	for _, in := range r.Divergent {
		for _, d := range in.Differences {
			results = append(results, sarifResult{RuleID: d.Kind, Level: "error", Message: sarifMessage{in.Name + ": " + d.Message}, Locations: loc(in)})
		}
	}
	for _, in := range r.Unreachable {
		results = append(results, sarifResult{RuleID: "unreachable", Level: "warning", Message: sarifMessage{in.Name + ": " + in.Problem.Kind + ": " + in.Problem.Message}, Locations: loc(in)})
	}
	log := sarifLog{
		Version: "2.1.0",
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Runs: []sarifRun{{
			Tool:    sarifTool{Driver: sarifDriver{Name: "lockstep", InformationURI: "https://github.com/lockstep-dev/lockstep", Rules: sarifRules}},
			Results: results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}
