package app

import (
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/testkit/golden"
)

// TestHelpGolden compares `lockstep --help` and `lockstep CMD --help` of
// every command and group with testdata/help.golden: every flag's name,
// alias, env var, default and help text is held there, so that moving a
// flag's declaration changes nothing a user sees (go test -update rewrites
// it).
func TestHelpGolden(t *testing.T) {
	a := New()
	// A flag's env var, where set, would show as its default.
	for _, k := range envVars(a.Flags, a.Commands) {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	// pin's --cache default is under the user's cache directory.
	t.Setenv("XDG_CACHE_HOME", "/home/user/.cache")
	paths := []string{""}
	walkCommands(a.Commands, "", func(p string, _ *cli.Command) { paths = append(paths, p) })
	if len(paths) < 20 {
		t.Fatalf("found only %d commands: %v", len(paths), paths)
	}
	var b strings.Builder
	for _, p := range paths {
		args := append(strings.Fields(p), "--help")
		code, out, errs := run(t, args...)
		if code != 0 || errs != "" {
			t.Errorf("lockstep %s = exit %d, stderr %q; want help", strings.Join(args, " "), code, errs)
		}
		b.WriteString("$ lockstep " + strings.Join(args, " ") + "\n" + out + "\n")
	}
	golden.Check(t, "help.golden", b.String())
}
