package app

import (
	"fmt"
	"regexp"
	"strings"
)

// inlineComment is a value that ends in a comment: systemd's
// EnvironmentFile= (and environment.d) read everything after the "=" as
// the value, an inline " # comment" included, so that
// "LOCKSTEP_RUNNING=docker:app   # the container" names a container
// "docker:app   # the container".
var inlineComment = regexp.MustCompile(`[ \t]#`)

// inlineComments refuses, for the commands that systemd runs with an
// environment file (admit and agent), a LOCKSTEP_* variable of environ
// whose value ends in an inline comment: a usage error (exit 2) that says
// why, before any flag reads it (a duration such as LOCKSTEP_MAX_AGE
// would otherwise fail to parse without saying why).
func inlineComments(command string, environ []string) error {
	if command != "admit" && command != "agent" {
		return nil
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LOCKSTEP_") && inlineComment.MatchString(v) {
			return usage(fmt.Errorf("%s=%q: systemd keeps inline comments in the value; put the comment on its own line", k, v))
		}
	}
	return nil
}
