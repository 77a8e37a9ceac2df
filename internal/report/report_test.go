package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a|b", `a\|b`},
		{"two\nlines", "two lines"},
		{"<script>", "&lt;script&gt;"},
		{"*bold* _it_ [x](y)", `\*bold\* \_it\_ \[x\](y)`},
		{`back\slash`, `back\\slash`},
	} {
		if got := Cell(tc.in); got != tc.want {
			t.Errorf("Cell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got, want := Code("a|b`c"), "`a\\|b'c`"; got != want {
		t.Errorf("Code = %q, want %q", got, want)
	}
}

func TestTable(t *testing.T) {
	tb := NewTable("path", "status")
	tb.Row(Cell("a|b.js"), "missing")
	tb.Row("short")
	var md, txt bytes.Buffer
	if err := tb.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	want := "| path | status |\n| --- | --- |\n| a\\|b.js | missing |\n| short |  |\n"
	if md.String() != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", md.String(), want)
	}
	if err := tb.Text(&txt); err != nil {
		t.Fatal(err)
	}
	if want := "path     status\na\\|b.js  missing\nshort    \n"; txt.String() != want {
		t.Errorf("Text:\n%q\nwant:\n%q", txt.String(), want)
	}
}

func TestSARIF(t *testing.T) {
	s := NewSARIF("lockstep", "dev", "https://example.invalid",
		Rule{ID: "a", ShortDescription: Message{"A"}, DefaultConfiguration: &Config{Level: LevelError}},
		Rule{ID: "b", ShortDescription: Message{"B"}})
	s.Add("b", "", "b happened", Logical("cdn.example", "endpoint"))
	s.Base("ASSETS", "", "the assets")
	s.Add("a", "", "a happened", File("app.js", "ASSETS")).Properties = map[string]any{"url": "https://cdn/app.js"}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	r := got.Runs[0].Results
	if got.Version != "2.1.0" || len(r) != 2 || r[0].RuleIndex != 1 || r[0].Level != "warning" || r[1].RuleIndex != 0 || r[1].Level != "error" {
		t.Errorf("SARIF = %s", b.String())
	}
	if !strings.Contains(b.String(), `"uriBaseId": "ASSETS"`) {
		t.Errorf("SARIF lacks the artifact location:\n%s", b.String())
	}
}
