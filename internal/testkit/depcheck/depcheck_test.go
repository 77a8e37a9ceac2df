package depcheck

import (
	"slices"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, path string
		want          bool
	}{
		{"github.com/urfave/cli", "github.com/urfave/cli/v2", true},
		{"k8s.io/", "k8s.io/client-go/rest", true},
		{"example.com/verify/...", "example.com/verify", true},
		{"example.com/verify/...", "example.com/verify/cdn", true},
		{"example.com/verify/...", "example.com/verifyx", false},
		{"example.com/verify/...", "example.com/verdict", false},
		{"net/http/httptest", "net/http", false},
	} {
		if got := Match(tt.pattern, tt.path); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

// graph is a hand-made import graph: app -> lib -> heavy -> heavy/sub, and
// app -> heavy/ok.
var graph = &Graph{
	Roots: []string{"ex/app", "ex/lib"},
	Imports: map[string][]string{
		"ex/app":       {"ex/lib", "ex/heavy/ok"},
		"ex/lib":       {"ex/heavy"},
		"ex/heavy":     {"ex/heavy/sub"},
		"ex/heavy/sub": nil,
		"ex/heavy/ok":  nil,
	},
}

func TestCheckChains(t *testing.T) {
	vs := Rule{Deny: []string{"ex/heavy/..."}, Allow: []string{"ex/heavy/ok"}}.check(graph)
	want := []Violation{
		{"ex/app", "ex/heavy", []string{"ex/app", "ex/lib", "ex/heavy"}},
		{"ex/app", "ex/heavy/sub", []string{"ex/app", "ex/lib", "ex/heavy", "ex/heavy/sub"}},
		{"ex/lib", "ex/heavy", []string{"ex/lib", "ex/heavy"}},
		{"ex/lib", "ex/heavy/sub", []string{"ex/lib", "ex/heavy", "ex/heavy/sub"}},
	}
	if !slices.EqualFunc(vs, want, func(a, b Violation) bool {
		return a.Package == b.Package && a.Dependency == b.Dependency && slices.Equal(a.Chain, b.Chain)
	}) {
		t.Errorf("check = %v\nwant %v", vs, want)
	}
}

func TestImporters(t *testing.T) {
	if got := graph.Importers("ex/heavy"); !slices.Equal(got, []string{"ex/lib"}) {
		t.Errorf("Importers(ex/heavy) = %v, want [ex/lib]", got)
	}
	if got := graph.Importers("ex/nothing"); len(got) != 0 {
		t.Errorf("Importers(ex/nothing) = %v, want none", got)
	}
}

func TestCheckSkip(t *testing.T) {
	vs := Rule{Skip: []string{"ex/app"}, Deny: []string{"ex/heavy/sub"}}.check(graph)
	if len(vs) != 1 || vs[0].Package != "ex/lib" {
		t.Errorf("check with ex/app skipped = %v, want only ex/lib's violation", vs)
	}
}

// TestCheckRealPackage runs go list for real: this package imports
// testing (a denied dependency is found) and not net/http/httptest.
func TestCheckRealPackage(t *testing.T) {
	self := "github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
	vs, err := Rule{Packages: []string{self}, Deny: []string{"testing", "net/http/httptest"}}.Check()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Dependency != "testing" || !slices.Equal(vs[0].Chain, []string{self, "testing"}) {
		t.Errorf("Check = %v, want one violation: %s -> testing", vs, self)
	}
}

func TestListNoMatch(t *testing.T) {
	if _, err := List("github.com/lockstep-dev/lockstep/no/such/package/..."); err == nil {
		t.Error("List of a pattern that matches nothing: no error")
	}
}
