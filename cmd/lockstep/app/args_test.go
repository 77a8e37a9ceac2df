package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// leaves returns the path of every command that runs an action.
func leaves(cmds []*cli.Command, path string) []string {
	var out []string
	walkCommands(cmds, path, func(p string, c *cli.Command) {
		if len(c.Subcommands) == 0 {
			out = append(out, p)
		}
	})
	return out
}

// walkCommands calls fn with the path of every command under cmds, groups
// before their subcommands, in the order help lists them ("help" left out).
func walkCommands(cmds []*cli.Command, path string, fn func(string, *cli.Command)) {
	for _, c := range cmds {
		if c.Name == "help" {
			continue
		}
		p := strings.TrimSpace(path + " " + c.Name)
		fn(p, c)
		walkCommands(c.Subcommands, p, fn)
	}
}

// TestFlagsAnywhere walks every command: a flag after an argument is a
// flag (help shown, an unknown one refused as a usage error), and after
// "--" it is an argument.
func TestFlagsAnywhere(t *testing.T) {
	t.Parallel()
	cmds := leaves(New().Commands, "")
	if len(cmds) < 15 {
		t.Fatalf("found only %d commands: %v", len(cmds), cmds)
	}
	for _, path := range cmds {
		t.Run(path, func(t *testing.T) {
			args := strings.Fields(path)
			code, out, errs := run(t, append(args, "some-argument", "--help")...)
			if code != 0 || !strings.Contains(out, "lockstep "+path+" - ") {
				t.Errorf("%s ARG --help = exit %d, stdout %q, stderr %q; want its help", path, code, out, errs)
			}
			code, _, errs = run(t, append(args, "some-argument", "--no-such-flag")...)
			if code != ExitInvalid || !strings.Contains(errs, "no-such-flag") {
				t.Errorf("%s ARG --no-such-flag = exit %d, stderr %q; want a usage error naming the flag", path, code, errs)
			}
			code, _, errs = run(t, append(args, "some-argument", "--log-level", "loud")...)
			if code != ExitInvalid || !strings.Contains(errs, `"loud"`) {
				t.Errorf("%s ARG --log-level loud = exit %d, stderr %q; want the app's flag checked", path, code, errs)
			}
		})
	}
}

func TestSplitArgs(t *testing.T) {
	t.Parallel()
	defs := []cli.Flag{&cli.StringFlag{Name: "format", Aliases: []string{"f"}}, &cli.BoolFlag{Name: "full"}, &cli.StringSliceFlag{Name: "probe"}}
	for _, tc := range []struct {
		in          string
		flags, rest string
	}{
		{"REF --format json", "--format json", "REF"},
		{"--format json REF", "--format json", "REF"},
		{"a --full b -f=x c", "--full|-f=x", "a b c"},
		{"a --probe u1 --probe u2", "--probe u1|--probe u2", "a"},
		{"a -- --format json", "", "a --format json"},
		{"- --full", "--full", "-"},
		{"--unknown a", "--unknown", "a"},
		{"a --format", "--format", "a"},
	} {
		flags, rest := splitArgs(strings.Fields(tc.in), defs)
		var fs []string
		for _, f := range flags {
			fs = append(fs, strings.Join(f, " "))
		}
		if got := strings.Join(fs, "|"); got != tc.flags || strings.Join(rest, " ") != tc.rest {
			t.Errorf("splitArgs(%q) = %q, %q; want %q, %q", tc.in, got, strings.Join(rest, " "), tc.flags, tc.rest)
		}
	}
}

func TestMistypedCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"admitt"}, `did you mean "lockstep admit"`},
		{[]string{"manifest", "verfy"}, `did you mean "lockstep manifest verify"`},
		{[]string{"xyzzy"}, `unknown command "xyzzy"; see 'lockstep --help'`},
		// A subcommand given at the top: the command it belongs to.
		{[]string{"verify", "m.json"}, `unknown command "verify": did you mean "lockstep manifest verify"?`},
		{[]string{"check"}, `did you mean "lockstep cdn check" or "lockstep fleet check"?`},
		// An unknown flag, as the user wrote it, wherever it is given.
		{[]string{"admit", "--bogus"}, `unknown flag --bogus; see 'lockstep admit --help'`},
		{[]string{"manifest", "verify", "--bogus", "m.json"}, `unknown flag --bogus; see 'lockstep manifest verify --help'`},
		{[]string{"fleet", "check", "-q"}, `unknown flag -q; see 'lockstep fleet check --help'`},
		{[]string{"pin", "--bogus"}, `unknown flag --bogus; see 'lockstep pin --help'`},
		{[]string{"agent", "--bogus"}, `unknown flag --bogus; see 'lockstep agent --help'`},
		{[]string{"--bogus"}, `unknown flag --bogus; see 'lockstep --help'`},
	} {
		code, _, errs := run(t, tc.args...)
		if code != ExitInvalid || !strings.Contains(errs, tc.want) {
			t.Errorf("lockstep %v = exit %d, stderr %q; want exit 2 saying %q", tc.args, code, errs, tc.want)
		}
	}
}

// formatCommands returns the commands with a --format flag that offers
// json.
func formatCommands(cmds []*cli.Command, path string) []string {
	var out []string
	for _, c := range cmds {
		p := strings.TrimSpace(path + " " + c.Name)
		out = append(out, formatCommands(c.Subcommands, p)...)
		for _, f := range c.Flags {
			if sf, ok := f.(*cli.StringFlag); ok && sf.Name == "format" && strings.Contains(sf.Usage, "json") {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestJSONErrors: with --format json, exits 2 and 3 print a JSON error
// object on stdout, in every command that has the format.
func TestJSONErrors(t *testing.T) {
	t.Parallel()
	cmds := formatCommands(New().Commands, "")
	if len(cmds) < 8 {
		t.Fatalf("found only %d commands with --format json: %v", len(cmds), cmds)
	}
	check := func(t *testing.T, args []string, want int) {
		t.Helper()
		code, out, errs := run(t, args...)
		var e jsonError
		if err := json.Unmarshal([]byte(out), &e); err != nil || code != want || e.Error.ExitCode != want || e.Error.Message == "" {
			t.Errorf("lockstep %v = exit %d, stdout %q (%v), stderr %q; want exit %d and a JSON error object", args, code, out, err, errs, want)
		}
		if !strings.Contains(errs, e.Error.Message) {
			t.Errorf("lockstep %v: stderr %q does not say %q", args, errs, e.Error.Message)
		}
	}
	for _, path := range cmds {
		t.Run(path, func(t *testing.T) {
			check(t, append(strings.Fields(path), "--format", "json", "--no-such-flag"), ExitInvalid)
			check(t, append(strings.Fields(path), "--no-such-flag", "--format=json"), ExitInvalid)
		})
	}
	// Could not verify: the registry refuses connections.
	check(t, []string{"pin", "127.0.0.1:1/app:v1", "--format", "json"}, ExitUnverified)
	// Text stays text.
	if code, out, _ := run(t, "pin", "--no-such-flag"); code != ExitInvalid || out != "" {
		t.Errorf("pin --no-such-flag = exit %d, stdout %q; want exit 2 and nothing on stdout", code, out)
	}
}
