package depcheck

import (
	"slices"
	"strings"
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

// exFloors are the floors of a hand-made tree, lowest first, shaped as
// lockstep's: ground under ex/internal, the test kit and the fixtures
// below it but floors of their own, everything else a library.
var exFloors = Floors{
	{Name: "ground", Packages: []string{"ex/internal/..."}},
	{Name: "library", Packages: []string{"ex/..."}},
	{Name: "fixture", Packages: []string{"ex/internal/fixture/..."}, ImportedBy: []string{"demo", "testkit"}},
	{Name: "demo", Packages: []string{"ex/cmd/internal/demo/..."}},
	{Name: "command", Packages: []string{"ex/cmd/..."}},
	{Name: "testkit", Packages: []string{"ex/internal/testkit/..."}},
}

func TestFloorsOf(t *testing.T) {
	for _, tt := range []struct {
		pkg  string
		want int
	}{
		{"ex/internal/transport", 0},
		{"ex/internal/testkitx", 0}, // a prefix of a floor's path is not on it
		{"ex/internal/testkit/sigtest", 5},
		{"ex/internal/testkit", 5},
		{"ex/internal/fixture/scenario", 2},
		{"ex/manifest", 1},
		{"ex/cmd/app", 4},
		{"ex/cmd/internal/demo/servers", 3},
		{"other.org/lib", -1},
	} {
		if got := exFloors.Of(tt.pkg); got != tt.want {
			t.Errorf("Of(%q) = %d, want %d", tt.pkg, got, tt.want)
		}
	}
}

func TestFloorsCheck(t *testing.T) {
	// ok holds every kind of import the floors allow: down a floor, within
	// one, to another module, to a fixture from the demo and the test kit,
	// and the test kit's import of the command.
	ok := map[string][]string{
		"ex/internal/transport":        {"ex/internal/atomicfile", "other.org/lib"},
		"ex/internal/atomicfile":       nil,
		"ex/manifest":                  {"ex/internal/atomicfile"},
		"ex/verify":                    {"ex/manifest"},
		"ex/internal/fixture/scenario": {"ex/manifest"},
		"ex/cmd/internal/demo":         {"ex/internal/fixture/scenario", "ex/verify"},
		"ex/cmd/app":                   {"ex/cmd/internal/demo", "ex/verify"},
		"ex/internal/testkit/sigtest":  {"ex/internal/fixture/scenario", "ex/cmd/app"},
	}
	for _, tt := range []struct {
		name string
		// add are imports added to ok's.
		add  map[string][]string
		want []string
	}{
		{"allowed", nil, nil},
		{"ground imports a library", map[string][]string{"ex/internal/transport": {"ex/manifest"}},
			[]string{"ex/internal/transport (ground) imports ex/manifest (library): an import runs up a floor"}},
		{"library imports the test kit", map[string][]string{"ex/verify": {"ex/internal/testkit/sigtest"}},
			[]string{"ex/verify (library) imports ex/internal/testkit/sigtest (testkit): an import runs up a floor"}},
		{"command imports the test kit", map[string][]string{"ex/cmd/app": {"ex/internal/testkit/sigtest"}},
			[]string{"ex/cmd/app (command) imports ex/internal/testkit/sigtest (testkit): an import runs up a floor"}},
		{"library imports a fixture", map[string][]string{"ex/manifest": {"ex/internal/fixture/scenario"}},
			[]string{"ex/manifest (library) imports ex/internal/fixture/scenario (fixture): an import runs up a floor"}},
		// The command is above the fixtures, and still may not import them.
		{"command imports a fixture", map[string][]string{"ex/cmd/app": {"ex/internal/fixture/scenario"}},
			[]string{"ex/cmd/app (command) imports ex/internal/fixture/scenario (fixture): fixture is imported only by demo, testkit"}},
		{"a library imports the demo", map[string][]string{"ex/verify": {"ex/cmd/internal/demo"}},
			[]string{"ex/verify (library) imports ex/cmd/internal/demo (demo): an import runs up a floor"}},
		{"two at once, sorted", map[string][]string{
			"ex/manifest":           {"ex/cmd/internal/demo"},
			"ex/internal/transport": {"ex/cmd/app"},
		}, []string{
			"ex/internal/transport (ground) imports ex/cmd/app (command): an import runs up a floor",
			"ex/manifest (library) imports ex/cmd/internal/demo (demo): an import runs up a floor",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &Graph{Imports: map[string][]string{}}
			for p, imps := range ok {
				g.Roots = append(g.Roots, p)
				g.Imports[p] = append(slices.Clone(imps), tt.add[p]...)
			}
			vs, err := exFloors.Check(g)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, v.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Check = %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestFloorsCheckGuardsItself: floors that would check nothing, a floor
// no package is on or an ImportedBy naming no floor, are errors.
func TestFloorsCheckGuardsItself(t *testing.T) {
	g := &Graph{Roots: []string{"ex/manifest", "ex/internal/atomicfile"}, Imports: map[string][]string{"ex/manifest": {"ex/internal/atomicfile"}}}
	if _, err := (Floors{{Name: "ground", Packages: []string{"ex/internal/..."}}, {Name: "library", Packages: []string{"ex/..."}}}).Check(g); err != nil {
		t.Fatalf("Check of floors that hold every package: %v", err)
	}
	if _, err := (Floors{
		{Name: "ground", Packages: []string{"ex/internal/..."}},
		{Name: "library", Packages: []string{"ex/..."}},
		{Name: "testkit", Packages: []string{"ex/internal/testkti/..."}},
	}).Check(g); err == nil || !strings.Contains(err.Error(), "testkit") {
		t.Errorf("Check with a floor no package is on: err = %v, want one naming testkit", err)
	}
	if _, err := (Floors{
		{Name: "ground", Packages: []string{"ex/internal/..."}, ImportedBy: []string{"libary"}},
		{Name: "library", Packages: []string{"ex/..."}},
	}).Check(g); err == nil || !strings.Contains(err.Error(), "libary") {
		t.Errorf("Check with ImportedBy naming no floor: err = %v, want one naming libary", err)
	}
}
