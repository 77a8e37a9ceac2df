package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestNoFlagLeftRequired: after New, urfave/cli sees no Required flag on
// any command (it would exit 3 for a missing one); requireFlags checks
// them instead.
func TestNoFlagLeftRequired(t *testing.T) {
	t.Parallel()
	var walk func(cmds []*cli.Command, path string)
	walk = func(cmds []*cli.Command, path string) {
		for _, cmd := range cmds {
			for _, f := range cmd.Flags {
				if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
					t.Errorf("%s %s: --%s is still Required for urfave/cli", path, cmd.Name, f.Names()[0])
				}
			}
			walk(cmd.Subcommands, path+" "+cmd.Name)
		}
	}
	a := New()
	for _, f := range a.Flags {
		if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
			t.Errorf("the global --%s is Required: requireFlags covers commands only", f.Names()[0])
		}
	}
	walk(a.Commands, "lockstep")
}

// TestMissingRequiredFlag: a missing required flag is a usage error (exit
// 2) naming the flag, on stderr, with nothing on stdout; given on the
// command line or by its environment variable, it passes.
func TestMissingRequiredFlag(t *testing.T) {
	sub := &cli.Command{
		Name:  "leaf",
		Flags: []cli.Flag{&cli.IntFlag{Name: "n", Aliases: []string{"count"}, Usage: "a number", Required: true, EnvVars: []string{"LOCKSTEP_TEST_N"}}},
		Action: func(c *cli.Context) error {
			_, err := fmt.Fprintln(c.App.Writer, c.Int("n"))
			return err
		},
	}
	before := 0
	parent := &cli.Command{
		Name:        "parent",
		Flags:       []cli.Flag{&cli.StringFlag{Name: "who", Required: true}},
		Before:      func(*cli.Context) error { before++; return nil },
		Subcommands: []*cli.Command{sub},
	}
	requireFlags([]*cli.Command{parent}, "lockstep")
	if u := sub.Flags[0].(*cli.IntFlag).Usage; u != "a number (required)" {
		t.Errorf("usage = %q, want it marked (required)", u)
	}
	tests := []struct {
		args []string
		env  string
		code int
		say  string
	}{
		{args: []string{"parent", "leaf", "--n", "1"}, code: ExitInvalid, say: "--who is required; see 'lockstep parent --help'"},
		{args: []string{"parent", "--who", "me", "leaf"}, code: ExitInvalid, say: "--n is required; see 'lockstep parent leaf --help'"},
		{args: []string{"parent", "--who", "me", "leaf", "--n", "4"}, code: ExitOK, say: "4"},
		{args: []string{"parent", "--who", "me", "leaf", "--count", "5"}, code: ExitOK, say: "5"},
		{args: []string{"parent", "--who", "me", "leaf"}, env: "6", code: ExitOK, say: "6"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("LOCKSTEP_TEST_N", tt.env)
			}
			out, errs, code := storeTestRun(t, []*cli.Command{parent}, tt.args...)
			if code != tt.code || !strings.Contains(out+errs, tt.say) {
				t.Errorf("exit %d, want %d saying %q\nstdout:\n%s\nstderr:\n%s", code, tt.code, tt.say, out, errs)
			}
			if tt.code != ExitOK && out != "" {
				t.Errorf("a usage error wrote to stdout (data): %q", out)
			}
		})
	}
	if before != 4 {
		t.Errorf("the parent's own Before ran %d times, want 4 (once per run given --who, and never without)", before)
	}
	// The real commands: status without --release.
	out, errs, code := storeTestRun(t, nil, "status", "--store", t.TempDir())
	if code != ExitInvalid || !strings.Contains(errs, "--release is required; see 'lockstep status --help'") || out != "" {
		t.Errorf("status without --release: exit %d, stdout %q, stderr %q; want 2 naming --release", code, out, errs)
	}
}

// TestUnknownFlagEverywhere runs every command of the app, at every depth,
// with a flag it does not have: each must be a usage error (exit 2) that
// writes nothing to stdout.
func TestUnknownFlagEverywhere(t *testing.T) {
	t.Parallel()
	var walk func(cmds []*cli.Command, path []string)
	walk = func(cmds []*cli.Command, path []string) {
		for _, cmd := range cmds {
			if cmd.Name == "help" {
				continue
			}
			args := append(append([]string(nil), path...), cmd.Name)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, out, errs := run(t, append(args, "--no-such-flag")...)
				if code != ExitInvalid || out != "" || !strings.Contains(errs, "no-such-flag") {
					t.Errorf("exit %d, want %d naming the flag, and no stdout\nstdout:\n%s\nstderr:\n%s", code, ExitInvalid, out, errs)
				}
			})
			walk(cmd.Subcommands, args)
		}
	}
	walk(New().Commands, nil)
}
