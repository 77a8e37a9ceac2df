package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/manifest/signature"
)

// scopedEnv are the variables lockstep reads itself, through lookupEnv,
// and so can take from one run's own environment (Run's env): the key's
// password and the container runtimes' endpoints.
var scopedEnv = []string{
	"COSIGN_PASSWORD",
	"DOCKER_HOST", "CONTAINERD_ADDRESS", "CONTAINER_RUNTIME_ENDPOINT", "ECS_CONTAINER_METADATA_URI_V4",
}

// envKey is where Run keeps a run's own environment in App.Metadata.
const envKey = "lockstep.env"

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
	a := New()
	a.Reader = strings.NewReader("")
	a.Writer, a.ErrWriter = stdout, stderr
	a.Metadata = map[string]any{envKey: vars}
	return Exit(a.RunContext(ctx, append([]string{a.Name}, args...)), stderr)
}

// lookupEnv is os.LookupEnv for the run: its own environment (Run's env)
// first, then the process's.
func lookupEnv(c *cli.Context, name string) (string, bool) {
	if vars, ok := c.App.Metadata[envKey].(map[string]string); ok {
		if v, ok := vars[name]; ok {
			return v, true
		}
	}
	return os.LookupEnv(name)
}

// getenv is os.Getenv for the run (lookupEnv).
func getenv(c *cli.Context, name string) string {
	v, _ := lookupEnv(c, name)
	return v
}

// password is the run's key password: COSIGN_PASSWORD as lookupEnv finds
// it (signature.EnvPassword over the run's environment).
func password(c *cli.Context) signature.PassFunc {
	return signature.LookupPassword(func(name string) (string, bool) { return lookupEnv(c, name) })
}
