package app

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"
)

// unknownCommand is the usage error for a command name that is none of
// cmds. A name that is a subcommand one level down ("verify" is "manifest
// verify", "check" is "cdn check" and "fleet check") is suggested as that;
// otherwise the closest command when it is close (Jaro-Winkler, as
// urfave/cli measures, at least 0.8: "verfy" is "verify", "fleet" is not
// "pin"). path is the command the name was given to ("lockstep",
// "lockstep manifest").
func unknownCommand(name string, cmds []*cli.Command, path string) error {
	var nested []string
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, s := range c.Subcommands {
			if !s.Hidden && s.HasName(name) {
				nested = append(nested, fmt.Sprintf("%q", path+" "+c.Name+" "+s.Name))
			}
		}
	}
	if len(nested) > 0 {
		return usage(fmt.Errorf("unknown command %q: did you mean %s? See '%s --help'", name, strings.Join(nested, " or "), path))
	}
	best, score := "", 0.0
	for _, c := range cmds {
		if c.Hidden || c.Name == "help" {
			continue
		}
		for _, n := range c.Names() {
			if s := smetrics.JaroWinkler(n, name, 0.7, 4); s > score {
				best, score = n, s
			}
		}
	}
	if score >= 0.8 {
		return usage(fmt.Errorf("unknown command %q: did you mean %q? See '%s --help'", name, path+" "+best, path))
	}
	return usage(fmt.Errorf("unknown command %q; see '%s --help'", name, path))
}

// undefinedFlag is the standard flag package's words for an unknown flag,
// which it shows with one dash whatever the user typed.
var undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -(.+)$`)

// flagUsage is a flag parsing error in lockstep's words: an unknown flag
// is shown as the user would write it (--bogus, -x), with where to look.
func flagUsage(err error, path string) error {
	if err == nil {
		return nil
	}
	if m := undefinedFlag.FindStringSubmatch(err.Error()); m != nil {
		dashes := "--"
		if len(m[1]) == 1 {
			dashes = "-"
		}
		return usage(fmt.Errorf("unknown flag %s%s; see '%s --help'", dashes, m[1], path))
	}
	return usage(err)
}
