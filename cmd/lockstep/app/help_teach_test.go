package app

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// taught is a command's Description read back into its parts, as describe
// writes them.
type taught struct {
	about    string
	examples []string // one command line each, continuations joined
	codes    map[int]string
}

// readHelp splits a Description into what it says, its examples and its
// exit codes; an error says which part is missing or malformed.
func readHelp(desc string) (taught, error) {
	var h taught
	about, rest, ok := strings.Cut(desc, "Examples:\n")
	if !ok {
		return h, fmt.Errorf("no \"Examples:\" section")
	}
	h.about = strings.TrimSpace(about)
	ex, codes, ok := strings.Cut(rest, "\nExit codes:\n")
	if !ok {
		return h, fmt.Errorf("no \"Exit codes:\" section after the examples")
	}
	var cur string
	for _, line := range strings.Split(strings.TrimRight(ex, "\n"), "\n") {
		if !strings.HasPrefix(line, "  ") {
			return h, fmt.Errorf("example line %q is not indented by two spaces", line)
		}
		line = strings.TrimSpace(line)
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur += cont
			continue
		}
		h.examples = append(h.examples, cur+line)
		cur = ""
	}
	if cur != "" {
		return h, fmt.Errorf("example %q ends in a continuation", cur)
	}
	h.codes = map[int]string{}
	last := -1
	for _, line := range strings.Split(codes, "\n") {
		if rest, ok := strings.CutPrefix(line, "     "); ok && last >= 0 {
			h.codes[last] += " " + rest
			continue
		}
		num, text, ok := strings.Cut(strings.TrimPrefix(line, "  "), "  ")
		code, err := strconv.Atoi(num)
		if !strings.HasPrefix(line, "  ") || !ok || err != nil {
			return h, fmt.Errorf("exit-code line %q is not \"  N  meaning\"", line)
		}
		if _, dup := h.codes[code]; dup || code <= last {
			return h, fmt.Errorf("exit code %d out of order or repeated", code)
		}
		h.codes[code] = text
		last = code
	}
	return h, nil
}

// words splits a command line as a shell would, for the examples' needs:
// blanks separate, single and double quotes group, and a # or an unquoted
// redirection or pipe (>, >>, |) ends the command.
func words(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '#' && !in:
			return out, nil
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote")
	}
	if in {
		out = append(out, cur.String())
	}
	for i, w := range out {
		if w == ">" || w == ">>" || w == "|" {
			return out[:i], nil
		}
	}
	return out, nil
}

// flagSet is flags applied to a new flag.FlagSet, as urfave/cli parses a
// command's arguments; required lists the flags marked "(required)" (see
// requireFlags).
func flagSet(name string, flags []cli.Flag) (fs *flag.FlagSet, required []string, err error) {
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range append(flags, cli.HelpFlag) {
		if err := f.Apply(fs); err != nil {
			return nil, nil, fmt.Errorf("applying --%s: %v", f.Names()[0], err)
		}
		if u, ok := f.(cli.DocGenerationFlag); ok && strings.HasSuffix(u.GetUsage(), "(required)") {
			required = append(required, f.Names()[0])
		}
	}
	return fs, required, nil
}

// parseAnywhere parses args with fs, flags before and after arguments (as
// interspersed makes the app do), and returns the arguments.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), nil
		}
		rest, args = append(rest, args[0]), args[1:]
	}
}

// checkExample parses line, an example of the command at path, with the
// app's own definitions: leading VAR=value assignments, "lockstep", the
// global flags, the command path (which must be path or under it), and
// the command's flags, each of which must exist and take the value given;
// every flag marked "(required)" must be given.
func checkExample(a *cli.App, path, line string) error {
	args, err := words(line)
	if err != nil {
		return err
	}
	for len(args) > 0 && strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "-") {
		args = args[1:]
	}
	if len(args) == 0 || args[0] != "lockstep" {
		return fmt.Errorf("does not start with lockstep")
	}
	global, _, err := flagSet("lockstep", a.Flags)
	if err != nil {
		return err
	}
	if err := global.Parse(args[1:]); err != nil {
		return fmt.Errorf("global flags: %v", err)
	}
	args = global.Args()
	cmds := a.Commands
	var cmd *cli.Command
	var got []string
	for len(args) > 0 && len(cmds) > 0 {
		next := findCommand(cmds, args[0])
		if next == nil {
			break
		}
		cmd, cmds, args = next, next.Subcommands, args[1:]
		got = append(got, next.Name)
	}
	p := strings.Join(got, " ")
	if cmd == nil || (p != path && !strings.HasPrefix(p, path+" ")) {
		return fmt.Errorf("runs %q, not lockstep %s", "lockstep "+p, path)
	}
	if len(cmd.Subcommands) > 0 {
		return fmt.Errorf("lockstep %s is a group: an example runs one of its commands", p)
	}
	fs, required, err := flagSet(p, cmd.Flags)
	if err != nil {
		return err
	}
	if _, err := parseAnywhere(fs, args); err != nil {
		return fmt.Errorf("lockstep %s: %v", p, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, r := range required {
		if !set[r] {
			return fmt.Errorf("lockstep %s: --%s is required", p, r)
		}
	}
	return nil
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// TestHelpTeaches walks every command and group, as TestHelpGolden does:
// each has a description, at least two examples that parse with its own
// flag definitions, and says what exit 0 and exit 2 (and 1 and 3, where
// they occur) mean for it.
func TestHelpTeaches(t *testing.T) {
	t.Parallel()
	a := New()
	n := 0
	walkCommands(a.Commands, "", func(path string, c *cli.Command) {
		n++
		t.Run(path, func(t *testing.T) {
			h, err := readHelp(c.Description)
			if err != nil {
				t.Fatalf("lockstep %s --help: %v", path, err)
			}
			if h.about == "" && c.Usage == "" {
				t.Errorf("lockstep %s --help: no description", path)
			}
			if len(h.examples) < 2 {
				t.Errorf("lockstep %s --help: %d examples, want at least 2", path, len(h.examples))
			}
			for _, e := range h.examples {
				if err := checkExample(a, path, e); err != nil {
					t.Errorf("lockstep %s --help: example %q: %v", path, e, err)
				}
			}
			for _, code := range []int{ExitOK, ExitInvalid} {
				if strings.TrimSpace(h.codes[code]) == "" {
					t.Errorf("lockstep %s --help: exit code %d not explained", path, code)
				}
			}
			for code := range h.codes {
				if code < ExitOK || code > ExitUnverified {
					t.Errorf("lockstep %s --help: exit code %d is not one lockstep uses", path, code)
				}
			}
		})
	})
	if n < 20 {
		t.Fatalf("found only %d commands", n)
	}
}

// TestCheckExample shows that the examples' check refuses what it must.
func TestCheckExample(t *testing.T) {
	t.Parallel()
	a := New()
	for _, tc := range []struct {
		path, line string
		ok         bool
	}{
		{"pin", "lockstep pin registry.example/web:v1", true},
		{"pin", "lockstep --log-level debug pin --format json web:v1 --platform linux/amd64", true},
		{"keygen", "COSIGN_PASSWORD= lockstep keygen --output-key-prefix release", true},
		{"manifest", "lockstep manifest digest release.json", true},
		{"pin", "lockstep pin --no-such-flag web:v1", false},
		{"pin", "lockstep pin --concurrency many web:v1", false},
		{"pin", "lockstep pin --format", false},
		{"pin", "lockstep record --release web --generation 1", false},
		{"record", "lockstep record --generation 1 --image web=web:v1", false},
		{"manifest", "lockstep manifest", false},
		{"manifest", "lockstep manifest nope release.json", false},
		{"pin", "crane digest web:v1", false},
		{"pin", "lockstep pin 'web:v1", false},
	} {
		err := checkExample(a, tc.path, tc.line)
		if (err == nil) != tc.ok {
			t.Errorf("checkExample(%q, %q) = %v, want ok %v", tc.path, tc.line, err, tc.ok)
		}
	}
}
