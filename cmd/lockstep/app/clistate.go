package app

import (
	"flag"

	"github.com/urfave/cli/v2"
)

// urfave/cli v2 keeps the help and version flags (cli.HelpFlag,
// cli.VersionFlag) and the help command in package variables and adds
// them to every App it runs; running an App writes to them: a BoolFlag's
// Apply records its default in the flag, and a command's setup sets the
// help command's name and categories. Two apps running at once (the
// package's parallel tests, `lockstep demo` running commands in process)
// then race. This file makes each App's help its own:
//
//   - the help and version flags are replaced, once, before any App runs,
//     by flags whose Apply registers their names and writes nothing to
//     themselves (staticBool): urfave/cli only reads them after that (their
//     names, for --help and --version);
//   - every App, and every command under it, gets a copy of the help
//     command of its own when the App starts (ownHelp, from Before):
//     urfave/cli adds its shared one only where a command named help is
//     missing, and runs the App's own help command in place of the shared
//     one.
//
// TestAppsRunConcurrently holds this under -race.

func init() {
	cli.HelpFlag = &staticBool{cli.HelpFlag.(*cli.BoolFlag)}
	cli.VersionFlag = &staticBool{cli.VersionFlag.(*cli.BoolFlag)}
}

// staticBool is a bool flag whose Apply writes nothing to the flag: the
// value lives in the flag set alone.
type staticBool struct{ *cli.BoolFlag }

// Apply registers the flag's names in set, false by default.
func (f *staticBool) Apply(set *flag.FlagSet) error {
	for _, n := range f.Names() {
		set.Bool(n, false, f.Usage)
	}
	return nil
}

// GetDefaultText is empty, as for the BoolFlag it replaces
// (DisableDefaultText): the help shows no default.
func (f *staticBool) GetDefaultText() string { return "" }

// sharedHelp is urfave/cli's own help command, which App.Setup adds to
// an App that has none (nil if it adds none), and helpTemplate a copy
// made before any App runs, whose own setup adds none under it.
var sharedHelp, helpTemplate = func() (*cli.Command, *cli.Command) {
	a := &cli.App{HideVersion: true}
	a.Setup()
	for _, c := range a.Commands {
		if c.Name == "help" {
			h := *c
			h.HideHelpCommand = true
			return c, &h
		}
	}
	return nil, nil
}()

// ownHelp gives the App of c (in its Before: after App.Setup added the
// shared help command, before any command runs) a help command of its
// own in place of the shared one, and every command and group under it
// one of its own where urfave/cli would add the shared one when it runs
// them (Command.setup).
func ownHelp(a *cli.App) {
	if helpTemplate == nil {
		return
	}
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for i, c := range cmds {
			switch {
			case c == sharedHelp:
				h := *helpTemplate
				h.HelpName = c.Name // as urfave/cli names its own
				cmds[i] = &h
			case !c.HideHelp && !c.HideHelpCommand && c.Command("help") == nil:
				if len(c.Subcommands) == 0 && c.CustomHelpTemplate == "" {
					// `lockstep help CMD` picks its template by whether
					// CMD has subcommands; urfave/cli adds its help
					// command to CMD only when CMD runs.
					c.CustomHelpTemplate = cli.CommandHelpTemplate
				}
				walk(c.Subcommands)
				h := *helpTemplate
				c.Subcommands = append(c.Subcommands, &h)
			}
		}
	}
	walk(a.Commands)
}
