package scripts

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/testkit/golden"
)

// The part of docs/ci.md generated from action.yml, between these lines.
const (
	docsBegin = "<!-- BEGIN action.yml's inputs and outputs: generated, edit action.yml and run go test ./scripts -run TestActionDocs -update -->"
	docsEnd   = "<!-- END action.yml's inputs and outputs -->"
)

// actionSpec is what the tests read of action.yml, in its order.
type actionSpec struct {
	inputs, outputs []actionField
	steps           []map[string]any
}

type actionField struct {
	name, description, def string
	required               bool
}

func readAction(t *testing.T) actionSpec {
	t.Helper()
	raw, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Inputs  yaml.Node `yaml:"inputs"`
		Outputs yaml.Node `yaml:"outputs"`
		Runs    struct {
			Using string           `yaml:"using"`
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	fields := func(n *yaml.Node) []actionField {
		var out []actionField
		for i := 0; i+1 < len(n.Content); i += 2 {
			var f struct {
				Description string  `yaml:"description"`
				Required    bool    `yaml:"required"`
				Default     *string `yaml:"default"`
			}
			if err := n.Content[i+1].Decode(&f); err != nil {
				t.Fatalf("action.yml %s: %v", n.Content[i].Value, err)
			}
			af := actionField{name: n.Content[i].Value, description: strings.TrimSpace(f.Description), required: f.Required}
			if f.Default != nil {
				af.def = *f.Default
			}
			out = append(out, af)
		}
		return out
	}
	return actionSpec{inputs: fields(&doc.Inputs), outputs: fields(&doc.Outputs), steps: doc.Runs.Steps}
}

// cell is s as one Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// actionTables renders action.yml's inputs and outputs as Markdown.
func actionTables(a actionSpec) string {
	var b strings.Builder
	b.WriteString("| input | default | meaning |\n| --- | --- | --- |\n")
	for _, f := range a.inputs {
		def := ""
		if f.def != "" {
			def = "`" + f.def + "`"
		}
		desc := cell(f.description)
		if f.required {
			desc = "**required** " + desc
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.name, def, desc)
	}
	b.WriteString("\n| output | meaning |\n| --- | --- |\n")
	for _, f := range a.outputs {
		fmt.Fprintf(&b, "| `%s` | %s |\n", f.name, cell(f.description))
	}
	return b.String()
}

// TestActionDocs: docs/ci.md's inputs and outputs tables are action.yml's,
// generated (-update rewrites them); a table that drifted fails.
func TestActionDocs(t *testing.T) {
	a := readAction(t)
	if len(a.inputs) == 0 || len(a.outputs) == 0 {
		t.Fatalf("action.yml: %d inputs, %d outputs", len(a.inputs), len(a.outputs))
	}
	raw, err := os.ReadFile("../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	before, rest, ok1 := strings.Cut(doc, docsBegin+"\n")
	got, after, ok2 := strings.Cut(rest, docsEnd)
	if !ok1 || !ok2 {
		t.Fatalf("docs/ci.md has no generated part between %q and %q", docsBegin, docsEnd)
	}
	want := actionTables(a)
	if *golden.Update {
		if err := os.WriteFile("../docs/ci.md", []byte(before+docsBegin+"\n"+want+docsEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("docs/ci.md's inputs and outputs differ from action.yml's (go test ./scripts -run TestActionDocs -update rewrites them):\n--- docs/ci.md\n%s\n--- action.yml\n%s", got, want)
	}
}

// TestActionUsesNoActions: every step of the Action is a run step. A
// composite action's uses: steps are all fetched when the job is set up,
// even those whose if: is false, and fail the job on a runner that allows
// only selected actions or cannot reach GitHub.
func TestActionUsesNoActions(t *testing.T) {
	a := readAction(t)
	if len(a.steps) == 0 {
		t.Fatal("action.yml has no steps")
	}
	for i, s := range a.steps {
		if u, ok := s["uses"]; ok {
			t.Errorf("action.yml step %d uses %v: the Action must depend on no other action", i, u)
		}
		if _, ok := s["run"]; !ok {
			t.Errorf("action.yml step %d is not a run step: %v", i, s)
		}
	}
}
