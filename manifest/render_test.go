package manifest_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/golden"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestDescriptionGolden renders `manifest show`'s report in every format
// (the same golden files as cmd/lockstep/app's: the CLI adds nothing).
func TestDescriptionGolden(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		file, format, golden string
		files                bool
	}{
		{"release-v1.json", "json", "show.json.golden", false},
		{"release-v1.json", "text", "show.txt.golden", true},
		{"release-v2.json", "markdown", "show.md.golden", false},
	} {
		m, _, err := manifest.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		d, err := manifest.Describe(m, now)
		if err != nil {
			t.Fatalf("Describe(%s): %v", tc.file, err)
		}
		var b bytes.Buffer
		if err := d.Write(&b, tc.format, tc.files); err != nil {
			t.Fatalf("Write(%s, %s): %v", tc.file, tc.format, err)
		}
		golden.Check(t, tc.golden, b.String())
	}
}

// TestDiffReportGolden renders `manifest diff`'s report in every format.
func TestDiffReportGolden(t *testing.T) {
	read := func(name string) *manifest.Manifest {
		m, _, err := manifest.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	v1, v2 := read("release-v1.json"), read("release-v2.json")
	for _, tc := range []struct {
		old, new *manifest.Manifest
		allow    []string
		format   string
		golden   string
		refused  bool
	}{
		{v1, v2, nil, "json", "diff.json.golden", true},
		{v1, v2, nil, "text", "diff.txt.golden", true},
		{v1, v2, []string{"web"}, "text", "diff-allowed.txt.golden", false},
		{v2, v1, nil, "json", "diff-backwards.json.golden", true},
		{v1, v2, nil, "markdown", "diff.md.golden", true},
	} {
		r := manifest.Diff(tc.old, tc.new).Report(tc.allow...)
		if r.Refused != tc.refused || r.Refused != (len(r.Refusals) > 0) {
			t.Errorf("%s: Refused %v with %d refusals, want %v", tc.golden, r.Refused, len(r.Refusals), tc.refused)
		}
		if why := r.Why(); (why != "") != tc.refused || (len(r.Refusals) > 0 && !strings.HasPrefix(why, r.Refusals[0].Message)) {
			t.Errorf("%s: Why() = %q, want the refusals' messages (%d)", tc.golden, why, len(r.Refusals))
		}
		var b bytes.Buffer
		if err := r.Write(&b, tc.format); err != nil {
			t.Fatalf("%s: Write: %v", tc.golden, err)
		}
		golden.Check(t, tc.golden, b.String())
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	m, _, err := manifest.ReadFile("testdata/release-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := manifest.Describe(m, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := d.Write(&b, "yaml", false); err == nil || !strings.Contains(err.Error(), "text, json, markdown") || b.Len() != 0 {
		t.Errorf("Description.Write(yaml) = %v, wrote %q", err, b.String())
	}
	if err := manifest.Diff(m, m).Report().Write(&b, "sarif"); err == nil || b.Len() != 0 {
		t.Errorf("DiffReport.Write(sarif) = %v, wrote %q", err, b.String())
	}
}
