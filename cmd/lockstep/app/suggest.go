package app

import (
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"
)

// unknownCommand is the usage error for a command name that is none of
// cmds, suggesting the closest one when it is close (Jaro-Winkler, as
// urfave/cli measures, at least 0.8: "verfy" is "verify", "fleet" is not
// "pin"). path is the command the name was given to ("lockstep",
// "lockstep manifest").
func unknownCommand(name string, cmds []*cli.Command, path string) error {
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
