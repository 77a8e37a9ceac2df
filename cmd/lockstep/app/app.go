package app

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// New returns the lockstep application.
func New() *cli.App { return newApp(nil) }

// newApp is New with env as the run's own environment (Run's, read before
// the process's). Its commands share one invocation, built in Before from
// the app's flags.
func newApp(env map[string]string) *cli.App {
	return appWith(newInvocation(env))
}

// appWith is the app whose commands share inv, which its Before starts.
func appWith(inv *invocation) *cli.App {
	a := &cli.App{
		Name:                 "lockstep",
		Usage:                "verify that the fleet runs exactly the release that was shipped",
		Version:              Version,
		EnableBashCompletion: true,
		// A list flag's value is one item, whatever it holds: a label
		// selector (k8s:store/app=web,tier!=canary, app in (a,b)), a
		// URL or a path may hold commas. Repeat the flag for more.
		DisableSliceFlagSeparator: true,
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "log-level",
				Value:   "info",
				Usage:   "log level on stderr: debug, info, warn or error",
				EnvVars: []string{"LOCKSTEP_LOG_LEVEL"},
			},
		},
		Before: func(c *cli.Context) error {
			// Before the command's flags read the environment.
			if err := inlineComments(c.Args().First(), os.Environ()); err != nil {
				return err
			}
			lvl, err := parseLevel(c.String("log-level"))
			if err != nil {
				return err
			}
			inv.start(c.App.ErrWriter, lvl)
			ownHelp(c.App)
			return nil
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return flagUsage(err, "lockstep")
		},
		ExitErrHandler: func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownCommand(c.Args().First(), c.App.Commands, "lockstep")
			}
			return cli.ShowAppHelp(c)
		},
		Commands: []*cli.Command{
			// The CI step.
			pinCommand(inv),
			recordCommand(inv),
			manifestCommand(inv),
			cdnCommand(inv),
			signCommand(inv),
			keygenCommand(inv),
			// The store.
			publishCommand(inv),
			statusCommand(inv),
			rollbackCommand(inv),
			gcCommand(inv),
			// The gates.
			admitCommand(inv),
			webhookCommand(inv),
			// The fleet.
			agentCommand(inv),
			fleetCommand(inv),
			// The rest.
			demoCommand(inv),
			versionCommand(inv),
		},
	}
	requireFlags(a.Commands, a.Name)
	interspersed(a.Commands)
	return a
}

// group is a command made of subcommands, described by desc (see
// describe); an unknown subcommand is a usage error.
func group(name, use, desc string, subs ...*cli.Command) *cli.Command {
	return &cli.Command{
		Name:        name,
		Usage:       use,
		Description: desc,
		Subcommands: subs,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownCommand(c.Args().First(), c.Command.Subcommands, "lockstep "+name)
			}
			return cli.ShowSubcommandHelp(c)
		},
	}
}

// groupExits are the exit codes of a group run without a command.
func groupExits(name string) exits {
	return exits{
		0: "this help; `lockstep " + name + " COMMAND --help` says what each command's exit codes mean",
		2: "an unknown command or flag",
	}
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return 0, usage(fmt.Errorf("--log-level %q: want debug, info, warn or error", s))
	}
	return l, nil
}

// formatFlag is the --format flag of a report, with the formats it takes.
func formatFlag(formats ...string) *cli.StringFlag {
	return &cli.StringFlag{
		Name:  "format",
		Value: formats[0],
		Usage: "output format: " + strings.Join(formats, ", "),
	}
}

// format returns the --format value, checked against the allowed formats.
func format(c flagValues, formats ...string) (string, error) {
	f := c.String("format")
	for _, ok := range formats {
		if f == ok {
			return f, nil
		}
	}
	return "", usage(fmt.Errorf("--format %q: want one of %s", f, strings.Join(formats, ", ")))
}
