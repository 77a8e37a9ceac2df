package app

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/urfave/cli/v2"
)

// requireFlags makes a missing Required flag of any of cmds (and of their
// subcommands, named under path) a usage error, exit 2, for the whole app.
// urfave/cli reports one with an unexported error type that ExitCode
// cannot classify (it would exit 3), after printing the help on stdout.
// So each Required flag is made optional for urfave/cli, marked
// "(required)" in its usage, and checked in its command's Before, which
// says "--NAME is required". It also gives every command without one an
// OnUsageError that makes an unknown or malformed flag a usage error
// (urfave/cli does not fall back to the app's). New calls it on every
// command.
func requireFlags(cmds []*cli.Command, path string) {
	cleared := map[cli.Flag]bool{}
	var walk func(cmds []*cli.Command, path string)
	walk = func(cmds []*cli.Command, path string) {
		for _, cmd := range cmds {
			full := path + " " + cmd.Name
			if cmd.OnUsageError == nil {
				// urfave/cli reports a command's flag errors through the
				// command's OnUsageError, not the app's: an unknown or
				// malformed flag is a usage error (exit 2) everywhere.
				cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return flagUsage(err, full) }
			}
			var names []string
			for _, f := range cmd.Flags {
				rf, ok := f.(cli.RequiredFlag)
				if cleared[f] || (ok && rf.IsRequired() && unrequire(f)) {
					cleared[f] = true
					names = append(names, f.Names()[0])
				}
			}
			if len(names) > 0 {
				cmd.Before = checkRequired(names, full, cmd.Before)
			}
			walk(cmd.Subcommands, full)
		}
	}
	walk(cmds, path)
}

// checkRequired is a Before that refuses, as a usage error, a command
// missing one of the named flags (on the command line or from its
// environment variables), then runs next.
func checkRequired(names []string, command string, next cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		for _, n := range names {
			if !c.IsSet(n) {
				return usage(fmt.Errorf("--%s is required; see '%s --help'", n, command))
			}
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}

// unrequire clears the Required field of f, one of urfave/cli's flag
// structs (they share no interface to set it), and adds "(required)" to
// its usage. It reports false for a flag it cannot change, which
// urfave/cli then checks itself.
func unrequire(f cli.Flag) bool {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	r := v.Elem().FieldByName("Required")
	if !r.IsValid() || r.Kind() != reflect.Bool || !r.CanSet() {
		return false
	}
	r.SetBool(false)
	if u := v.Elem().FieldByName("Usage"); u.IsValid() && u.Kind() == reflect.String && u.CanSet() && !strings.Contains(u.String(), "required") {
		u.SetString(strings.TrimSpace(u.String() + " (required)"))
	}
	return true
}
