package app

import (
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	out, errOut, code := lockstepRun(t, "", "demo")
	if code != 0 || !strings.Contains(out, "demo complete") || !strings.Contains(out, "(exit code 1)") {
		t.Errorf("lockstep demo: exit %d\n%s\n%s", code, out, errOut)
	}
}
