package fleet

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/agenttest"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/verdict"
)

func TestRun(t *testing.T) {
	specs := []string{
		startAgent(t, good("i-01"), agent.ServeOptions{}),
		startAgent(t, agenttest.Repushed("i-02"), agent.ServeOptions{}),
	}
	path := filepath.Join(t.TempDir(), "fleet.json")
	r, err := Run(context.Background(), fleettest.Signed(t, 7), RunOptions{Specs: specs, ReportFile: path})
	if !verdict.IsMismatch(err) || r == nil {
		t.Fatalf("Run = %v, %v; want a report and a mismatch", r, err)
	}
	if s := r.Summary; s.Instances != 2 || s.Match != 1 || s.Divergent != 1 {
		t.Errorf("summary = %+v, want 1 of 2 matching, 1 divergent", s)
	}
	var want bytes.Buffer
	if err := r.WriteJSON(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("report file = %q, %v; want the JSON report\n%s", got, err, want.Bytes())
	}

	// A spec that cannot be read is Discover's *SpecError, with no report
	// and no file.
	path = filepath.Join(t.TempDir(), "none.json")
	r, err = Run(context.Background(), fleettest.Signed(t, 7), RunOptions{Specs: []string{"nonsense:x"}, ReportFile: path})
	var se *SpecError
	if r != nil || !errors.As(err, &se) {
		t.Errorf("Run(nonsense:x) = %v, %v; want no report and a *SpecError", r, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("report file after a bad spec: %v, want none", err)
	}
}

func TestReportWrite(t *testing.T) {
	r, _ := Check(context.Background(), fleettest.Signed(t, 7), targetsOf(startAgent(t, good("i-01"), agent.ServeOptions{})), Options{})
	for format, write := range map[string]func(*bytes.Buffer) error{
		"json":     func(b *bytes.Buffer) error { return r.WriteJSON(b) },
		"markdown": func(b *bytes.Buffer) error { return r.WriteMarkdown(b) },
		"sarif":    func(b *bytes.Buffer) error { return r.WriteSARIF(b) },
		"text":     func(b *bytes.Buffer) error { return r.WriteText(b) },
	} {
		var got, want bytes.Buffer
		if err := r.Write(&got, format); err != nil {
			t.Fatalf("Write(%s): %v", format, err)
		}
		if err := write(&want); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("Write(%s) = %q, want %q", format, got.String(), want.String())
		}
	}
}
