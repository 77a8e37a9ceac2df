package app

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// allFlags is every flag of the app and of each of its commands.
func allFlags(a *cli.App) []cli.Flag {
	all := slices.Clone(a.Flags)
	walkCommands(a.Commands, "", func(_ string, c *cli.Command) { all = append(all, c.Flags...) })
	return all
}

// TestWithNames: each flag of the app, wrapped, has the flag's names and
// every method of the flag's own type with the same signature, so that
// every optional interface urfave/cli and lockstep ask a flag for
// (ActionableFlag, RequiredFlag, DocGenerationFlag, TakesValue, ...) is
// still there; every flag type the app uses has a wrapper (one without
// would pay urfave/cli's names again), and the help flag is itself
// (urfave/cli finds it by identity).
func TestWithNames(t *testing.T) {
	t.Parallel()
	for _, f := range allFlags(New()) {
		w := withNames([]cli.Flag{f})[0]
		if f == cli.HelpFlag {
			if w != f {
				t.Errorf("the help flag was wrapped (%T)", w)
			}
			continue
		}
		ft, wt := reflect.TypeOf(f), reflect.TypeOf(w)
		if ft == wt {
			t.Errorf("flag %q: its type %v has no wrapper in withNames", f.Names()[0], ft)
			continue
		}
		if !slices.Equal(w.Names(), f.Names()) {
			t.Errorf("flag %q: wrapped names %q, want %q", f.Names()[0], w.Names(), f.Names())
		}
		for i := range ft.NumMethod() {
			m := ft.Method(i)
			wm, ok := wt.MethodByName(m.Name)
			if !ok {
				t.Errorf("flag %q (%v): the wrapper %v has no method %s", f.Names()[0], ft, wt, m.Name)
				continue
			}
			if !sameSignature(m.Type, wm.Type) {
				t.Errorf("flag %q: %s is %v on %v, %v on the wrapper", f.Names()[0], m.Name, m.Type, ft, wm.Type)
			}
		}
	}
}

// sameSignature compares two method types but for their receivers.
func sameSignature(a, b reflect.Type) bool {
	if a.NumIn() != b.NumIn() || a.NumOut() != b.NumOut() || a.IsVariadic() != b.IsVariadic() {
		return false
	}
	for i := 1; i < a.NumIn(); i++ {
		if a.In(i) != b.In(i) {
			return false
		}
	}
	for i := range a.NumOut() {
		if a.Out(i) != b.Out(i) {
			return false
		}
	}
	return true
}

// TestFlagsRestoredAfterRun: a command run holds its flags wrapped only
// for the run; after it, whether it succeeded or failed, the app's
// commands hold their own flags again (what help prints: urfave/cli's
// help asks for *cli.BoolFlag by type).
func TestFlagsRestoredAfterRun(t *testing.T) {
	t.Parallel()
	a := New()
	before := map[*cli.Command][]cli.Flag{}
	walkCommands(a.Commands, "", func(_ string, c *cli.Command) { before[c] = slices.Clone(c.Flags) })
	for _, args := range [][]string{
		{"admit", "--manifest", "/nonexistent/m.json", "--release", "web", "--insecure-allow-unsigned", "--running", "file:/nonexistent", "--state-dir", t.TempDir()},
		{"admit", "--no-such-flag"},
		{"version"},
	} {
		var out bytes.Buffer
		a.Writer, a.ErrWriter = &out, &out
		_ = a.RunContext(context.Background(), append([]string{"lockstep"}, args...))
		for c, flags := range before {
			if len(c.Flags) != len(flags) {
				t.Fatalf("after lockstep %q: %s has %d flags, want %d", args, c.Name, len(c.Flags), len(flags))
			}
			for i := range flags {
				if c.Flags[i] != flags[i] {
					t.Fatalf("after lockstep %q: %s's flag %d is %T, want its own %T", args, c.Name, i, c.Flags[i], flags[i])
				}
			}
		}
	}
}
