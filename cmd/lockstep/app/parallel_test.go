package app

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestAppsRunConcurrently runs the app in many goroutines at once, as the
// package's parallel tests do: help (the flag, the command, a group's and a
// command's), the version, a usage error and a command that runs. Under
// -race it fails if a run writes state another run reads: urfave/cli v2
// keeps its help and version flags and its help command in package
// variables, which each App.Run used to write (a flag's Apply records its
// default; a command's setup its categories).
func TestAppsRunConcurrently(t *testing.T) {
	t.Parallel()
	runs := [][]string{
		{"--help"}, {"help"}, {"help", "admit"}, {"admit", "--help"}, {"manifest"}, {"manifest", "--help"},
		{"manifest", "help", "validate"}, {"manifest", "validate", "--help"}, {"--version"}, {"version"},
		{"admit", "--no-such-flag"}, {"no-such-command"}, {"--log-level", "debug", "manifest", "validate", "nothing.json"},
	}
	want := map[string]int{}
	for _, args := range runs {
		code, _, _ := runQuiet(args)
		want[fmt.Sprint(args)] = code
	}
	var wg sync.WaitGroup
	for range 4 {
		for _, args := range runs {
			wg.Go(func() {
				if code, _, stderr := runQuiet(args); code != want[fmt.Sprint(args)] {
					t.Errorf("lockstep %q beside other runs exits %d, alone %d:\n%s", args, code, want[fmt.Sprint(args)], stderr)
				}
			})
		}
	}
	wg.Wait()
}

// runQuiet is run without a *testing.T, for goroutines.
func runQuiet(args []string) (int, string, string) {
	var out, errw bytes.Buffer
	a := New()
	a.Writer, a.ErrWriter = &out, &errw
	err := a.RunContext(context.Background(), append([]string{"lockstep"}, args...))
	return Exit(err, &errw), out.String(), errw.String()
}
