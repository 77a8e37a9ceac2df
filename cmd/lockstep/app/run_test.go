package app

import (
	"bytes"
	"context"
	"strings"
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

// runIn is run with env ("NAME=value") as the run's own environment
// (Run), so that a parallel test gives its run a password, a runtime's
// endpoint or an S3 server without setting the process's environment.
func runIn(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := Run(context.Background(), env, args, &out, &errw)
	return code, out.String(), errw.String()
}

// envMap is env ("NAME=value" entries) as a run's environment map, for the
// test's own clients built as a run builds them (newS3Client).
func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
