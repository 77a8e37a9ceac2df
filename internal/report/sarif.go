package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// SARIFVersion and SARIFSchema identify the SARIF format written.
const (
	SARIFVersion = "2.1.0"
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

// SARIF levels.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNote    = "note"
)

// SARIF is a SARIF 2.1.0 log with one run.
type SARIF struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// Run is one tool's run. OriginalURIBaseIDs says what each uriBaseId
// its results use stands for (Base).
type Run struct {
	Tool               Tool                    `json:"tool"`
	OriginalURIBaseIDs map[string]BaseLocation `json:"originalUriBaseIds,omitempty"`
	Results            []Result                `json:"results"`
}

// BaseLocation is what a uriBaseId stands for: an absolute URI ending in
// "/", where there is one, and a description.
type BaseLocation struct {
	URI         string   `json:"uri,omitempty"`
	Description *Message `json:"description,omitempty"`
}

// Tool names the tool.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver describes the tool and its rules.
type Driver struct {
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	InformationURI string `json:"informationUri,omitempty"`
	Rules          []Rule `json:"rules"`
}

// Rule is one kind of result.
type Rule struct {
	ID                   string   `json:"id"`
	Name                 string   `json:"name,omitempty"`
	ShortDescription     Message  `json:"shortDescription"`
	FullDescription      *Message `json:"fullDescription,omitempty"`
	HelpURI              string   `json:"helpUri,omitempty"`
	DefaultConfiguration *Config  `json:"defaultConfiguration,omitempty"`
}

// Config is a rule's default configuration.
type Config struct {
	Level string `json:"level"`
}

// Message is a SARIF message.
type Message struct {
	Text string `json:"text"`
}

// Result is one finding.
type Result struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             Message           `json:"message"`
	Locations           []Location        `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

// Location is where a result applies.
type Location struct {
	PhysicalLocation *PhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []LogicalLocation `json:"logicalLocations,omitempty"`
}

// PhysicalLocation is a file.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
}

// ArtifactLocation names a file by URI, relative to a base where
// URIBaseID is set.
type ArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// LogicalLocation names something that is not a file (an instance, an
// endpoint).
type LogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

// NewSARIF returns a log for the tool with its rules (the rule IDs that
// Add may use) and no results.
func NewSARIF(tool, version, uri string, rules ...Rule) *SARIF {
	return &SARIF{
		Schema:  SARIFSchema,
		Version: SARIFVersion,
		Runs: []Run{{
			Tool:    Tool{Driver: Driver{Name: tool, Version: version, InformationURI: uri, Rules: rules}},
			Results: []Result{},
		}},
	}
}

// Add appends a result for ruleID (its index and, when level is empty,
// its default level filled in) and returns it for further fields.
func (s *SARIF) Add(ruleID, level, text string, locs ...Location) *Result {
	run := &s.Runs[0]
	idx := -1
	for i, r := range run.Tool.Driver.Rules {
		if r.ID == ruleID {
			idx = i
			if level == "" && r.DefaultConfiguration != nil {
				level = r.DefaultConfiguration.Level
			}
		}
	}
	if level == "" {
		level = LevelWarning
	}
	run.Results = append(run.Results, Result{RuleID: ruleID, RuleIndex: idx, Level: level, Message: Message{Text: text}, Locations: locs})
	return &run.Results[len(run.Results)-1]
}

// Base defines the uriBaseId id that File locations use: uri (absolute,
// ending in "/"; empty where the base has no URI of its own, e.g. a
// directory of the build machine) and what it is, in text.
func (s *SARIF) Base(id, uri, text string) {
	run := &s.Runs[0]
	if run.OriginalURIBaseIDs == nil {
		run.OriginalURIBaseIDs = map[string]BaseLocation{}
	}
	if uri != "" && !strings.HasSuffix(uri, "/") {
		uri += "/"
	}
	run.OriginalURIBaseIDs[id] = BaseLocation{URI: uri, Description: &Message{Text: text}}
}

// File is a location naming a file (a path relative to uriBase, if set).
func File(uri, uriBase string) Location {
	return Location{PhysicalLocation: &PhysicalLocation{ArtifactLocation: ArtifactLocation{URI: uri, URIBaseID: uriBase}}}
}

// Logical is a location naming a resource that is not a file.
func Logical(name, kind string) Location {
	return Location{LogicalLocations: []LogicalLocation{{Name: name, FullyQualifiedName: name, Kind: kind}}}
}

// Write writes the log as indented JSON. A result whose location uses a
// uriBaseId that Base did not define is an error, and nothing is written.
func (s *SARIF) Write(w io.Writer) error {
	for _, run := range s.Runs {
		for _, r := range run.Results {
			for _, l := range r.Locations {
				if l.PhysicalLocation == nil {
					continue
				}
				if id := l.PhysicalLocation.ArtifactLocation.URIBaseID; id != "" {
					if _, ok := run.OriginalURIBaseIDs[id]; !ok {
						return fmt.Errorf("SARIF result %s uses uriBaseId %q, which originalUriBaseIds does not define", r.RuleID, id)
					}
				}
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}
