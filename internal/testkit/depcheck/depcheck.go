package depcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Rule says what packages must not depend on.
//
// A pattern in Deny, Allow and Skip is an import path prefix, as in
// "github.com/urfave/cli" (which also matches github.com/urfave/cli/v2), or
// an import path followed by "/...", which matches that path and the
// packages under it and nothing else.
type Rule struct {
	// Packages are `go list` patterns: import paths, with "/..." for a tree.
	// Patterns relative to the module ("./...") are read from the test's
	// directory, so a rule that may run anywhere names full import paths.
	Packages []string
	// Skip are packages matched by Packages that the rule does not check.
	Skip []string
	// Deny are the dependencies none of Packages may have.
	Deny []string
	// Allow are dependencies exempt from Deny.
	Allow []string
}

// Violation is one denied dependency of one package.
type Violation struct {
	Package    string
	Dependency string
	// Chain is the import chain from Package to Dependency, both included.
	Chain []string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s depends on %s: %s", v.Package, v.Dependency, strings.Join(v.Chain, " -> "))
}

// Graph is the import graph `go list -deps` prints for some patterns: the
// packages the patterns matched (Roots) and every package's imports.
type Graph struct {
	Roots   []string
	Imports map[string][]string
}

// List runs `go list -deps` on patterns. It returns an error when go list
// fails or when the patterns match no package (a guard that checks nothing
// is no guard).
func List(patterns ...string) (*Graph, error) {
	return ListEnv(nil, patterns...)
}

// ListEnv is List with env added to go list's environment, as in
// "GOOS=darwin": the imports of another platform's build.
func ListEnv(env []string, patterns ...string) (*Graph, error) {
	args := append([]string{"list", "-deps", "-f", "{{.DepOnly}} {{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%sgo list -deps %s: %w\n%s", envPrefix(env), strings.Join(patterns, " "), err, stderr.Bytes())
	}
	g := &Graph{Imports: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		g.Imports[f[1]] = f[2:]
		if f[0] == "false" {
			g.Roots = append(g.Roots, f[1])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading go list's output: %w", err)
	}
	if len(g.Roots) == 0 {
		return nil, fmt.Errorf("%sgo list -deps %s matched no package", envPrefix(env), strings.Join(patterns, " "))
	}
	return g, nil
}

func envPrefix(env []string) string {
	if len(env) == 0 {
		return ""
	}
	return strings.Join(env, " ") + " "
}

// Match reports whether the import path p matches pattern (see Rule).
func Match(pattern, p string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == tree || strings.HasPrefix(p, tree+"/")
	}
	return strings.HasPrefix(p, pattern)
}

func matchAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return Match(pat, p) })
}

// Check lists r.Packages and returns every denied dependency, one
// Violation per package and dependency, in a stable order.
func (r Rule) Check() ([]Violation, error) {
	g, err := List(r.Packages...)
	if err != nil {
		return nil, err
	}
	return r.check(g), nil
}

func (r Rule) check(g *Graph) []Violation {
	var vs []Violation
	for _, root := range g.Roots {
		if slices.Contains(r.Skip, root) {
			continue
		}
		// Breadth first, so each chain is a shortest one.
		prev := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if p != root && matchAny(r.Deny, p) && !matchAny(r.Allow, p) {
				vs = append(vs, Violation{Package: root, Dependency: p, Chain: chain(prev, p)})
			}
			for _, imp := range g.Imports[p] {
				if _, seen := prev[imp]; !seen {
					prev[imp] = p
					queue = append(queue, imp)
				}
			}
		}
	}
	slices.SortFunc(vs, func(a, b Violation) int {
		return strings.Compare(a.Package+" "+a.Dependency, b.Package+" "+b.Dependency)
	})
	return vs
}

func chain(prev map[string]string, p string) []string {
	var c []string
	for ; p != ""; p = prev[p] {
		c = append(c, p)
	}
	slices.Reverse(c)
	return c
}

// Assert fails t for every denied dependency of every rule, naming the
// chain of imports that brings it in, and fails it when a rule's packages
// cannot be listed.
func Assert(t testing.TB, rules ...Rule) {
	t.Helper()
	for _, r := range rules {
		vs, err := r.Check()
		if err != nil {
			t.Error(err)
			continue
		}
		for _, v := range vs {
			t.Error(v)
		}
	}
}

// Importers returns the packages of g that import dep directly, sorted.
func (g *Graph) Importers(dep string) []string {
	var out []string
	for p, imps := range g.Imports {
		if slices.Contains(imps, dep) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
