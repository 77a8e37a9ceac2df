package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// TestNoCLIContextBelowActions holds the invocation's rule in the
// package's own source: a *cli.Context is taken only by a command's action
// (a function handed to inv.act, or an Action literal) and by the few
// helpers that read the command line itself (its arguments, the app's own
// flags); every other helper reads flag values through flagValues, and
// gets its logger, clients and context from its caller, never by climbing
// back. Nothing is kept in App.Metadata.
func TestNoCLIContextBelowActions(t *testing.T) {
	t.Parallel()
	argReaders := []string{"appFlag", "appContext", "formatAndOneArg", "positional", "act"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	actions := map[string]bool{}
	type takes struct{ name, at string }
	var taking []takes
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "App.Metadata") {
			t.Errorf("%s uses App.Metadata: the run's state lives in its invocation", f)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "act" && len(n.Args) == 1 {
					if id, ok := n.Args[0].(*ast.Ident); ok {
						actions[id.Name] = true
					}
				}
			case *ast.FuncDecl:
				for _, p := range n.Type.Params.List {
					if star, ok := p.Type.(*ast.StarExpr); ok {
						if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
							if x, ok := sel.X.(*ast.Ident); ok && x.Name == "cli" {
								taking = append(taking, takes{n.Name.Name, fset.Position(n.Pos()).String()})
							}
						}
					}
				}
			}
			return true
		})
	}
	if len(actions) < 5 {
		t.Fatalf("found %d actions handed to inv.act, want the commands' (the test reads the wrong files?)", len(actions))
	}
	for _, f := range taking {
		if !actions[f.name] && !slices.Contains(argReaders, f.name) {
			t.Errorf("%s: %s takes a *cli.Context below an action: take flagValues, and the logger, clients and context from the caller", f.at, f.name)
		}
	}
}

// TestOpenStoreOnce: a run opens each store URL once on a client of the
// store's own (record --generation auto --previous store reads the store
// twice), and a store on a caller's client is the caller's, never shared.
func TestOpenStoreOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, other := t.TempDir(), t.TempDir()
	inv := newInvocation(map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK",
		"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:1"})
	for _, url := range []string{dir, "file://" + other, "s3://releases/lockstep"} {
		a, err := inv.openStore(ctx, url, nil)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		b, err := inv.openStore(ctx, url, nil)
		if err != nil {
			t.Fatalf("%s again: %v", url, err)
		}
		if a != b {
			t.Errorf("%s: opened twice in one run", url)
		}
		c, err := inv.openStore(ctx, url, transport.New(transport.DefaultPolicy()))
		if err != nil {
			t.Fatalf("%s on a client: %v", url, err)
		}
		if c == a {
			t.Errorf("%s: the store on the caller's client is the one on its own", url)
		}
	}
	a, _ := inv.openStore(ctx, dir, nil)
	if b, _ := inv.openStore(ctx, other, nil); a == b {
		t.Error("two URLs share a store")
	}
	if _, err := inv.openStore(ctx, "s3://", nil); err == nil {
		t.Error("a bad URL opened")
	}
}
