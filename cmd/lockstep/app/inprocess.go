package app

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// scopedEnv are the variables one run can take from its own environment
// (Run's env): those lockstep reads itself, through lookupEnv (the key's
// password, the container runtimes' endpoints, and GitHub Actions' that
// name a release's source and who moved a channel), and the AWS SDK's that
// awsConfig and newS3Client give the SDK explicitly when the run's env
// holds them (awsEnv: credentials, region, endpoints);
// without them the SDK reads the process's, as it always has.
var scopedEnv = append([]string{
	"COSIGN_PASSWORD",
	"DOCKER_HOST", "CONTAINERD_ADDRESS", "CONTAINER_RUNTIME_ENDPOINT", "ECS_CONTAINER_METADATA_URI_V4",
	"GITHUB_ACTIONS", "GITHUB_REPOSITORY", "GITHUB_SHA", "GITHUB_REF", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_SERVER_URL",
}, awsEnv...)

// Run runs lockstep in this process as main does (New().RunContext, then
// Exit), with args after the program's name, stdout and stderr as its
// writers and nothing on stdin, and returns its exit code. It is how
// `lockstep demo` runs the commands it prints.
//
// env ("NAME=value" entries) is the run's own environment, read before
// the process's; the process's environment is not changed. It takes only
// the variables lockstep reads itself and the AWS SDK's credentials,
// region and endpoints (scopedEnv), which every AWS
// client of the run (S3 stores and origins, Auto Scaling, the fleet's EC2)
// is given explicitly; a run without them leaves the SDK to read the
// process's. Any other variable (a flag's LOCKSTEP_*, which the CLI
// framework reads from the process, AWS_CA_BUNDLE or another the SDK or a
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
