package app

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// scopedEnv are the variables lockstep reads itself, through lookupEnv,
// and so can take from one run's own environment (Run's env): the key's
// password and the container runtimes' endpoints.
var scopedEnv = []string{
	"COSIGN_PASSWORD",
	"DOCKER_HOST", "CONTAINERD_ADDRESS", "CONTAINER_RUNTIME_ENDPOINT", "ECS_CONTAINER_METADATA_URI_V4",
}

// Run runs lockstep in this process as main does (New().RunContext, then
// Exit), with args after the program's name, stdout and stderr as its
// writers and nothing on stdin, and returns its exit code. It is how
// `lockstep demo` runs the commands it prints.
//
// env ("NAME=value" entries) is the run's own environment, read before
// the process's; the process's environment is not changed. It takes only
// the variables lockstep reads itself (scopedEnv); any other (a flag's
// LOCKSTEP_*, which the CLI framework reads from the process, or one a
// library reads) cannot be given to one run in process, and is a usage
// error (exit 2) before anything runs: pass the flag instead.
func Run(ctx context.Context, env, args []string, stdout, stderr io.Writer) int {
	vars := map[string]string{}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !slices.Contains(scopedEnv, name) {
			// The name only: a value may be a secret.
			return Exit(usage(fmt.Errorf("the environment entry %s: a run in process takes only NAME=value for %s", name, strings.Join(scopedEnv, ", "))), stderr)
		}
		vars[name] = value
	}
	a := newApp(vars)
	a.Reader = strings.NewReader("")
	a.Writer, a.ErrWriter = stdout, stderr
	return Exit(a.RunContext(ctx, append([]string{a.Name}, args...)), stderr)
}
