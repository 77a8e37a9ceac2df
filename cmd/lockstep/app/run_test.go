package app

import (
	"bytes"
	"context"
	"testing"
)

// run runs lockstep with args and returns its exit code, stdout and
// stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	a := New()
	a.Writer, a.ErrWriter = &out, &errw
	err := a.RunContext(context.Background(), append([]string{"lockstep"}, args...))
	code := Exit(err, &errw)
	return code, out.String(), errw.String()
}
