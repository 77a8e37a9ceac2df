package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// sarifSchema compiles the SARIF 2.1.0 schema (OASIS, errata 01), kept in
// testdata as published (sarif-spec, sarif-2.1/schema/sarif-schema-2.1.0.json)
// so that the test needs no network.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, b []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// TestSARIFSchema checks every SARIF log lockstep writes against the
// SARIF 2.1.0 schema: the cdn check's and the fleet check's golden files
// (which their tests compare with what they write) and a log built here
// with every kind of location; and that the schema does refuse a bad
// log, so that the check is real.
func TestSARIFSchema(t *testing.T) {
	s := sarifSchema(t)
	golden, err := filepath.Glob("../../verify/*/testdata/*.sarif")
	if err != nil || len(golden) < 2 {
		t.Fatalf("the golden SARIF files: %v %v", golden, err)
	}
	for _, p := range golden {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(s, b); err != nil {
			t.Errorf("%s is not valid SARIF 2.1.0: %v", p, err)
		}
	}

	log := report.NewSARIF("lockstep", "v1.2.3", "https://github.com/lockstep-dev/lockstep",
		report.Rule{ID: "x/one", Name: "One", ShortDescription: report.Message{Text: "one"}, DefaultConfiguration: &report.Config{Level: report.LevelError}})
	log.Base("ASSETS", "https://cdn.example/assets", "the assets")
	log.Base("ENDPOINTS", "", "the endpoints")
	loc := report.File("tls/cdn.example", "ENDPOINTS")
	loc.LogicalLocations = report.Logical("cdn.example", "endpoint").LogicalLocations
	log.Add("x/one", "", "a file", report.File("app.js", "ASSETS"))
	log.Add("x/one", report.LevelWarning, "an endpoint", loc)
	log.Add("x/one", "", "a resource", report.Logical("i-01", "resource"))
	var b bytes.Buffer
	if err := log.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := validate(s, b.Bytes()); err != nil {
		t.Errorf("a built log is not valid SARIF 2.1.0: %v\n%s", err, b.String())
	}
	if !strings.Contains(b.String(), `"uri": "https://cdn.example/assets/"`) {
		t.Errorf("a base URI does not end in /:\n%s", b.String())
	}

	bad := strings.Replace(b.String(), `"level": "warning"`, `"level": "fatal"`, 1)
	if err := validate(s, []byte(bad)); err == nil {
		t.Error("the schema accepted a result of level fatal: the check checks nothing")
	}
}

// A location relative to a base the log does not define is refused.
func TestSARIFUndefinedBase(t *testing.T) {
	log := report.NewSARIF("lockstep", "", "")
	log.Add("x/one", "", "a file", report.File("app.js", "ASSETS"))
	var b bytes.Buffer
	if err := log.Write(&b); err == nil || !strings.Contains(err.Error(), "ASSETS") || b.Len() != 0 {
		t.Errorf("Write with an undefined uriBaseId = %v, wrote %d bytes; want an error naming it and nothing", err, b.Len())
	}
}
