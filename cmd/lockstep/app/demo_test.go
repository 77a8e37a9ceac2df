package app

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDemo runs `lockstep demo` as a user does: every step behaves as
// designed, and the commands it prints are lockstep's own, keygen's
// included; cmd/lockstep/internal/demo's TestRun checks each against what ran.
func TestDemo(t *testing.T) {
	t.Parallel()
	out, errOut, code := lockstepRun(t, "", "demo")
	if code != 0 || !strings.Contains(out, "demo complete: all 16 steps behaved as designed") {
		t.Fatalf("lockstep demo: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"  $ lockstep keygen --output-key-prefix ", "  $ lockstep record ", "  (exit code 1)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("lockstep demo does not say %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "$ ") && !strings.HasPrefix(line, "  $ lockstep ") && !strings.HasPrefix(line, "  $ DOCKER_HOST=") {
			t.Errorf("lockstep demo prints a command that is not lockstep's: %q", line)
		}
	}
}

// TestDemoNamesInheritedFlags: the flags' variables set in the user's
// environment, which the demo's lines do not show, are what the demo
// names, each once.
func TestDemoNamesInheritedFlags(t *testing.T) {
	a := New()
	for _, k := range envVars(a.Flags, a.Commands) {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("LOCKSTEP_STORE", "file:///elsewhere") // declared by many commands
	t.Setenv("LOCKSTEP_TLS_WARN", "720h")
	t.Setenv("LOCKSTEP_NOT_A_FLAG", "x")
	if got := setEnvVars(a.Flags, a.Commands); !slices.Equal(got, []string{"LOCKSTEP_STORE", "LOCKSTEP_TLS_WARN"}) {
		t.Errorf("setEnvVars = %q, want LOCKSTEP_STORE and LOCKSTEP_TLS_WARN", got)
	}
}
