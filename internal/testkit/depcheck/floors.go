package depcheck

import (
	"fmt"
	"slices"
	"strings"
)

// Floor is one floor of a tree: the packages it holds and who may import
// them.
type Floor struct {
	Name string
	// Packages are patterns, as in Rule. A package belongs to the floor
	// with the longest pattern that matches it, so "mod/internal/..."
	// (the ground) and "mod/internal/testkit/..." (the test kit) can be
	// two floors, and "mod/..." a floor for everything not named.
	Packages []string
	// ImportedBy, when not empty, names the only floors (besides this
	// one) whose packages may import this floor's packages, even from
	// above.
	ImportedBy []string
}

// Floors are a tree's floors, lowest first. A package may import a
// package of its own floor or of a floor below; an import of a floor
// above runs upward.
type Floors []Floor

// FloorViolation is one import that breaks the floors: Importer imports
// Import.
type FloorViolation struct {
	Importer, Import           string
	ImporterFloor, ImportFloor string
	// Why says which rule it breaks.
	Why string
}

func (v FloorViolation) String() string {
	return fmt.Sprintf("%s (%s) imports %s (%s): %s", v.Importer, v.ImporterFloor, v.Import, v.ImportFloor, v.Why)
}

// Of returns the index of the floor that holds package p, or -1 when no
// floor's pattern matches it (a package of another module).
func (fs Floors) Of(p string) int {
	best, bestLen := -1, -1
	for i, f := range fs {
		for _, pat := range f.Packages {
			if Match(pat, p) && len(pat) > bestLen {
				best, bestLen = i, len(pat)
			}
		}
	}
	return best
}

// Check returns every import of g's roots that breaks fs, in a stable
// order: an import of a floor above the importer's, and an import of a
// floor whose ImportedBy does not name the importer's floor. Only the
// imports g holds are checked: `go list -deps` lists the imports of the
// packages' non-test files, so a test may import any floor.
//
// Check also fails when a floor holds none of g's roots: a floor whose
// patterns match nothing is a misspelt pattern, and a guard that checks
// nothing is no guard.
func (fs Floors) Check(g *Graph) ([]FloorViolation, error) {
	for _, f := range fs {
		for _, by := range f.ImportedBy {
			if !slices.ContainsFunc(fs, func(o Floor) bool { return o.Name == by }) {
				return nil, fmt.Errorf("floor %s is imported by %s, which is no floor", f.Name, by)
			}
		}
	}
	held := make([]bool, len(fs))
	var vs []FloorViolation
	for _, p := range g.Roots {
		from := fs.Of(p)
		if from < 0 {
			continue
		}
		held[from] = true
		for _, imp := range g.Imports[p] {
			to := fs.Of(imp)
			if to < 0 || to == from {
				continue
			}
			v := FloorViolation{Importer: p, Import: imp, ImporterFloor: fs[from].Name, ImportFloor: fs[to].Name}
			switch {
			case to > from:
				v.Why = "an import runs up a floor"
			case len(fs[to].ImportedBy) > 0 && !slices.Contains(fs[to].ImportedBy, fs[from].Name):
				v.Why = fmt.Sprintf("%s is imported only by %s", fs[to].Name, strings.Join(fs[to].ImportedBy, ", "))
			default:
				continue
			}
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b FloorViolation) int {
		return strings.Compare(a.Importer+" "+a.Import, b.Importer+" "+b.Import)
	})
	var empty []string
	for i, f := range fs {
		if !held[i] {
			empty = append(empty, f.Name)
		}
	}
	if len(empty) > 0 {
		return vs, fmt.Errorf("no package listed is on floor %s: check the floors' patterns", strings.Join(empty, ", "))
	}
	return vs, nil
}
