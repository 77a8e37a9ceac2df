package app

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// commaValues are values of list flags that hold commas: a label selector
// (the docs/fleet.md example, and a set-based one), a URL and a path.
var commaValues = []string{
	"k8s:store/app=web,tier!=canary",
	"k8s:store/app in (a,b)",
	"http://127.0.0.1:8080/page?ids=1,2",
	"/tmp/a,b/report.json",
}

// TestListFlagsKeepCommas: every list flag of every command (urfave/cli's
// StringSliceFlag splits at commas unless told not to) takes each value
// whole, on the command line and from its environment variable.
func TestListFlagsKeepCommas(t *testing.T) {
	found := 0
	for _, path := range commandPaths(New().Commands, nil) {
		cmd := path[len(path)-1]
		for _, f := range cmd.Flags {
			sf, ok := f.(*cli.StringSliceFlag)
			if !ok {
				continue
			}
			found++
			args := append([]string{"lockstep"}, commandNames(path)...)
			for _, v := range commaValues {
				args = append(args, "--"+sf.Name, v)
			}
			if got := listFlagValue(t, path, sf.Name, args); !slices.Equal(got, commaValues) {
				t.Errorf("%s --%s: got %q, want %q", strings.Join(args[:len(path)+1], " "), sf.Name, got, commaValues)
			}
			for _, env := range sf.EnvVars {
				t.Setenv(env, commaValues[0])
				got := listFlagValue(t, path, sf.Name, append([]string{"lockstep"}, commandNames(path)...))
				if !slices.Equal(got, commaValues[:1]) {
					t.Errorf("$%s=%q: --%s = %q, want it whole", env, commaValues[0], sf.Name, got)
				}
				t.Setenv(env, "")
			}
		}
	}
	// targets, probe, allow-host (admit, agent), registry-alias (admit,
	// webhook, fleet, ...), image, asset-list, exclude, cdn, allow-moved-tag, in-use.
	if found < 10 {
		t.Errorf("found %d list flags; the walk misses commands", found)
	}
}

// commandPaths lists every runnable command with its parents.
func commandPaths(cmds []*cli.Command, parents []*cli.Command) [][]*cli.Command {
	var out [][]*cli.Command
	for _, c := range cmds {
		p := append(slices.Clone(parents), c)
		if len(c.Subcommands) > 0 {
			out = append(out, commandPaths(c.Subcommands, p)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

func commandNames(path []*cli.Command) []string {
	var out []string
	for _, c := range path {
		out = append(out, c.Name)
	}
	return out
}

// listFlagValue runs a fresh app whose command at path (found by names)
// only reports the value of flag name; the flags are parsed exactly as in
// a real run (interspersed, withNames).
func listFlagValue(t *testing.T, path []*cli.Command, name string, args []string) []string {
	t.Helper()
	a := New()
	a.Writer, a.ErrWriter = io.Discard, io.Discard
	cmds := a.Commands
	var target *cli.Command
	for _, want := range path {
		i := slices.IndexFunc(cmds, func(c *cli.Command) bool { return c.Name == want.Name })
		if i < 0 {
			t.Fatalf("no command %s", want.Name)
		}
		target, cmds = cmds[i], cmds[i].Subcommands
	}
	var got []string
	target.Before, target.After = nil, nil
	for _, f := range target.Flags {
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			// Required flags are not what this test is about.
			switch rf := f.(type) {
			case *cli.StringFlag:
				rf.Required = false
			case *cli.StringSliceFlag:
				rf.Required = false
			}
		}
	}
	target.Action = func(c *cli.Context) error {
		got = c.StringSlice(name)
		return nil
	}
	// As New does: flags after arguments, names computed once.
	target.SkipFlagParsing = false
	interspersed([]*cli.Command{target})
	if err := a.RunContext(context.Background(), args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return got
}
