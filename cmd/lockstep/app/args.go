package app

import (
	"errors"
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed makes every command of cmds (and their subcommands) that
// runs an action accept its flags before and after its arguments, as
// cosign, crane and kubectl do: `lockstep pin REF --format json`. `--`
// ends the flags: what follows it is an argument, even "-x".
//
// urfave/cli/v2 stops parsing a command's flags at its first argument, so
// each such command is given SkipFlagParsing (urfave/cli hands it the
// arguments as typed) and an Action that moves the flags in front and
// runs a copy of the command, the one urfave/cli built, on them. A flag
// of the app (--log-level) given after the command is set on the app.
// With --format json, an exit 2 or 3 before anything was printed prints
// a JSON error object on stdout (see jsonError).
// New calls it after requireFlags, so that the copy runs the Before that
// checks required flags.
func interspersed(cmds []*cli.Command) {
	for _, cmd := range cmds {
		interspersed(cmd.Subcommands)
		if len(cmd.Subcommands) > 0 || cmd.Action == nil || cmd.SkipFlagParsing {
			continue
		}
		action, before, after := cmd.Action, cmd.Before, cmd.After
		cmd.SkipFlagParsing = true
		// urfave/cli asks every flag of the command for its names once the
		// command's Before has run (runFlagActions): for this run, the
		// command holds its flags with their names cached (withNames), and
		// gets its own back after it.
		orig := cmd.Flags
		cmd.Before = func(*cli.Context) error {
			cmd.Flags = withNames(orig)
			return nil
		}
		cmd.After = func(*cli.Context) error {
			cmd.Flags = orig
			return nil
		}
		cmd.Action = func(c *cli.Context) error {
			inner := *cmd
			inner.SkipFlagParsing = false
			inner.Action, inner.Before, inner.After = action, before, after
			named := cmd.Flags // withNames's, from the Before
			inner.Flags = orig
			root := appContext(c)
			flags, rest := splitArgs(c.Args().Slice(), append(append([]cli.Flag(nil), named...), c.App.Flags...))
			var own []string
			setApp := false
			for _, f := range flags {
				if name, value, ok := appFlag(f, root); ok {
					if err := root.Set(name, value); err != nil {
						return usage(err)
					}
					setApp = true
					continue
				}
				own = append(own, f...)
			}
			if setApp && c.App.Before != nil {
				// The app checked its flags before they were all set.
				if err := c.App.Before(root); err != nil {
					return err
				}
			}
			if helpAsked(own) {
				rest = nil // help for the command, not for a topic named by an argument
			} else {
				inner.Flags = named
			}
			nc := cli.NewContext(c.App, nil, c.Lineage()[1])
			nc.Command = &inner
			args := append(append([]string{inner.Name}, own...), "--")
			if !wantsJSON(own) {
				return inner.Run(nc, append(args, rest...)...)
			}
			out := &countingWriter{w: c.App.Writer}
			c.App.Writer = out
			err := inner.Run(nc, append(args, rest...)...)
			c.App.Writer = out.w
			if err != nil && out.n == 0 {
				return writeJSONError(out.w, err)
			}
			return err
		}
	}
}

// splitArgs parts args into flags (each with its value, when the flag
// takes one as the next argument) and the other arguments, in order.
// Everything after "--" is an argument, and so is "-" (stdin). An unknown flag is kept as a
// flag, for the command to refuse.
func splitArgs(args []string, defs []cli.Flag) (flags [][]string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(rest, args[i+1:]...)
		case len(a) < 2 || a[0] != '-':
			rest = append(rest, a)
		default:
			name := strings.TrimLeft(a, "-")
			f := []string{a}
			if !strings.Contains(name, "=") && takesValue(name, defs) && i+1 < len(args) {
				i++
				f = append(f, args[i])
			}
			flags = append(flags, f)
		}
	}
	return flags, rest
}

// takesValue reports whether the flag called name among defs takes a
// value as the next argument (any flag but a boolean one).
func takesValue(name string, defs []cli.Flag) bool {
	for _, d := range defs {
		for _, n := range d.Names() {
			if n != name {
				continue
			}
			if tv, ok := d.(interface{ TakesValue() bool }); ok {
				return tv.TakesValue()
			}
			return true
		}
	}
	return false
}

// helpAsked reports whether flags hold the help flag.
func helpAsked(flags []string) bool {
	for _, f := range flags {
		for _, n := range cli.HelpFlag.Names() {
			if f == "-"+n || f == "--"+n {
				return true
			}
		}
	}
	return false
}

// appFlag returns the name and value of f (one flag, maybe with its
// value) when it is a flag of the app (root), not of the command.
func appFlag(f []string, root *cli.Context) (name, value string, ok bool) {
	name = strings.TrimLeft(f[0], "-")
	name, value, eq := strings.Cut(name, "=")
	for _, n := range cli.HelpFlag.Names() {
		if n == name {
			return "", "", false // the command's own --help
		}
	}
	for _, d := range root.App.Flags {
		for _, n := range d.Names() {
			if n != name {
				continue
			}
			switch {
			case eq:
				return name, value, true
			case len(f) == 2:
				return name, f[1], true
			case !takesValue(name, root.App.Flags):
				return name, "true", true
			}
		}
	}
	return "", "", false
}

// appContext returns the context of the app's own flags: the outermost
// one with an App (urfave/cli puts a bare context around it).
func appContext(c *cli.Context) *cli.Context {
	root := c
	for _, l := range c.Lineage() {
		if l.App != nil {
			root = l
		}
	}
	return root
}

// formatAndOneArg is the start of a command that takes --format text|json
// and exactly one argument: the format, the argument, or a usage error
// saying "<takes>" (e.g. "sign takes one manifest file").
func formatAndOneArg(c *cli.Context, takes string) (string, string, error) {
	f, err := format(c, "text", "json")
	if err != nil {
		return "", "", err
	}
	if c.NArg() != 1 {
		return "", "", usage(errors.New(takes))
	}
	return f, c.Args().First(), nil
}
