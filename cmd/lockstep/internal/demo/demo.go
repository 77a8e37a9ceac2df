package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/internal/demo/bootgate"
	"github.com/lockstep-dev/lockstep/cmd/lockstep/internal/demo/servers"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
)

// Step is one step of the demo.
type Step struct {
	// Name is what the step does, as the narrative titles it.
	Name string
	// Run does it, printing what lockstep said through e. It returns an
	// error when the step does not behave as designed.
	Run func(ctx context.Context, e *Env) error
}

// Runner runs the lockstep CLI with args (after the program's name), env
// ("NAME=value" entries: the command's own environment, over the
// process's, which it must not change) and the writers of its stdout and
// stderr, and returns its exit code. cmd/lockstep/app.Run is the one
// `lockstep demo` uses: the CLI itself, in process.
type Runner func(ctx context.Context, env, args []string, stdout, stderr io.Writer) int

// Options configure Run.
type Options struct {
	// Dir keeps the demo's files (build, CDN, store, keys, manifests); ""
	// uses a temporary directory, removed afterwards.
	Dir string
	// Steps replaces Steps(), e.g. to run a part of the demo.
	Steps []Step
	// Run runs every `$ lockstep …` command the demo prints (required):
	// what it writes is what the narrative shows under the command, and
	// its exit code is what the step checks.
	Run Runner
	// LogLevel, when not "" or "info" (the CLI's default), is given to
	// every command as --log-level.
	LogLevel string
	// Inherited names the variables of the process's environment that
	// the commands read as their flags' defaults (LOCKSTEP_STORE, …): the
	// narrative names them, since the lines printed do not show them.
	Inherited []string
}

// Env is the world the steps share: the servers, the files, and what
// earlier steps produced.
type Env struct {
	// Out is the narrative.
	Out io.Writer
	// Registry is the in-memory registry; ImageRef the image's tag
	// reference in it.
	Registry *servers.Registry
	ImageRef string
	// BuildDir is the build's output, the directory record hashes;
	// CDNDir what the CDN (at base URL CDN) serves: a build's assets are
	// on the CDN once uploaded there.
	BuildDir, CDNDir, CDN string
	// Dir holds the manifests, the key pair and the store.
	Dir string
	// Release is the release name.
	Release string
	// Store is the manifest store (a directory), StoreURL its --store URL.
	Store    manifest.Store
	StoreURL string
	// Key and PublicKey are the release's signing key pair, as `lockstep
	// keygen` wrote it (Key encrypted with Password).
	Key, PublicKey string
	// Manifest and ManifestPath are release v1 once recorded.
	Manifest     *manifest.Manifest
	ManifestPath string
	// Served are the asset IDs the v1 build's page references.
	Served []string
	// Instances boots the instances whose boot gate runs.
	Instances *bootgate.Instances
	// BuilderKey and BuilderPublicKey are the builder's key pair, which
	// attests the images' provenance.
	BuilderKey, BuilderPublicKey string
	// Client carries every request the steps send.
	Client *transport.Client

	run      Runner
	logLevel string
}

// Steps is the demo, in order: the Epic Games Store outage of 2021-04-06,
// and the stale publisher of AWS us-east-1 in October 2025.
func Steps() []Step {
	return []Step{
		{"CI builds store v1, pushes store/web:v1 and uploads the build's assets to the CDN", pushRelease},
		{"pin the image by digest", pinImage},
		{"a key pair to sign releases with", makeKey},
		{"record release v1: the image, every asset checked on the CDN, signed; the generation from the store", recordV1},
		{"verify the signed manifest", verifyManifest},
		{"publish generation 1 to the store's production channel", publishV1},
		{"an instance of v1 boots: the boot gate admits it", admitGood},
		{"CI silently re-pushes store/web:v1 with a build that serves a new asset ID", repush},
		{"pin --previous: the moved tag is refused", refuseMovedTag},
		{"a new instance boots during a scale-up: the boot gate refuses it", refuseNewInstance},
		{"record the new build as v2 before its new asset is on the CDN: refused, nothing written", refuseV2OffCDN},
		{"upload the new asset, record v2 (generation 2) and publish it", publishV2},
		{"the scale-up instance boots again: admitted against v2", admitV2},
		{"a delayed pipeline publishes generation 1 again: refused, the channel keeps generation 2", refuseStalePublisher},
		{"CI attests the build provenance of the image it pushed", attestBuild},
		{"record --require-provenance binds the image to the release's commit, and refuses another commit", bindProvenance},
	}
}

// StepError says which step of the demo did not behave as designed.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("demo step %q: %v", e.Step, e.Err) }

func (e *StepError) Unwrap() error { return e.Err }

// Password is the password of the release's key pair: every command the
// demo runs has it as COSIGN_PASSWORD in its own environment, as a CI step
// has a secret.
const Password = "lockstep-demo"

// Run starts the registry and the CDN, runs the steps, and writes the
// narrative to w. It returns nil when every step behaved as designed, and
// a *StepError for the first that did not.
func Run(ctx context.Context, w io.Writer, opts Options) error {
	if opts.Run == nil {
		return errors.New("demo: Options.Run is required: the demo runs the commands it prints")
	}
	dir := opts.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "lockstep-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	e := &Env{
		Out: w, Dir: dir, Release: "store-web",
		BuildDir: filepath.Join(dir, "dist"), CDNDir: filepath.Join(dir, "cdn"),
		Client: transport.New(transport.DefaultPolicy()), run: opts.Run, logLevel: opts.LogLevel,
	}
	for _, d := range []string{e.BuildDir, e.CDNDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	storeDir := filepath.Join(dir, "store")
	if e.Store, err = filestore.New(storeDir); err != nil {
		return err
	}
	e.StoreURL = "file://" + storeDir
	reg, err := servers.StartRegistry()
	if err != nil {
		return err
	}
	defer reg.Close()
	e.Registry, e.ImageRef = reg, reg.Ref("store/web:v1")
	cdn, err := servers.Serve(http.FileServer(http.Dir(e.CDNDir)))
	if err != nil {
		return err
	}
	defer cdn.Close()
	e.CDN = cdn.URL + "/"
	e.Instances = &bootgate.Instances{Dir: filepath.Join(dir, "instances"), Client: e.Client, Run: e.lockstepCode, Say: e.Say}
	defer e.Instances.Close()

	steps := opts.Steps
	if steps == nil {
		steps = Steps()
	}
	fmt.Fprintf(w, "lockstep demo: the Epic Games Store outage of 2021-04-06, replayed on loopback\n")
	fmt.Fprintf(w, "  registry  %s (in memory)\n  cdn       %s (serving %s)\n  store     %s\n", reg.Host, e.CDN, e.CDNDir, e.StoreURL)
	fmt.Fprintf(w, "Every $ line is a lockstep command the demo runs, in this process, followed by all it printed\n"+
		"(stdout and stderr, as written). Each runs with COSIGN_PASSWORD=%s, the demo key's password, in\n"+
		"its own environment; your shell's environment is not changed.\n", Password)
	if len(opts.Inherited) > 0 {
		fmt.Fprintf(w, "Your environment sets %s, which the commands read as their flags' defaults, as in your shell:\n"+
			"what they print may differ from what the same lines print without it.\n", strings.Join(opts.Inherited, ", "))
	}
	for i, s := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n[%d/%d] %s\n", i+1, len(steps), s.Name)
		if err := s.Run(ctx, e); err != nil {
			fmt.Fprintf(w, "  NOT AS DESIGNED: %v\n", err)
			return &StepError{Step: s.Name, Err: err}
		}
	}
	fmt.Fprintf(w, "\ndemo complete: all %d steps behaved as designed\n", len(steps))
	return nil
}

// Ran is what a command the demo ran did.
type Ran struct {
	// Code is its exit code.
	Code int
	// Stdout and Stderr are what it wrote to each.
	Stdout, Stderr string
}

// Lockstep runs `lockstep ARGS` through the runner and prints it as a
// user would type it, then everything it wrote, indented, as it wrote it.
func (e *Env) Lockstep(ctx context.Context, args ...string) Ran {
	return e.LockstepEnv(ctx, nil, args...)
}

// LockstepEnv is Lockstep with env ("NAME=value") in the command's own
// environment; the line printed shows it before the command, as a shell
// takes it.
func (e *Env) LockstepEnv(ctx context.Context, env []string, args ...string) Ran {
	if e.logLevel != "" && e.logLevel != "info" {
		args = append([]string{"--log-level", e.logLevel}, args...)
	}
	fmt.Fprintf(e.Out, "  $ %s\n", CommandLine(env, append([]string{"lockstep"}, args...)))
	out := &indenter{w: e.Out}
	var stdout, stderr bytes.Buffer
	code := e.run(ctx, append(slices.Clone(env), "COSIGN_PASSWORD="+Password), args,
		&tee{buf: &stdout, out: out}, &tee{buf: &stderr, out: out})
	out.flush()
	if code != 0 {
		fmt.Fprintf(e.Out, "  (exit code %d)\n", code)
	}
	return Ran{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// lockstepCode is LockstepEnv for the instances: the exit code.
func (e *Env) lockstepCode(ctx context.Context, env []string, args ...string) int {
	return e.LockstepEnv(ctx, env, args...).Code
}

// Expect returns an error unless r exited with want and its output says
// each of says.
func (r Ran) Expect(want int, says ...string) error {
	if r.Code != want {
		return fmt.Errorf("exit code %d, want %d", r.Code, want)
	}
	for _, s := range says {
		if !strings.Contains(r.Stdout+r.Stderr, s) {
			return fmt.Errorf("exit code %d, but the output does not say %q", r.Code, s)
		}
	}
	return nil
}

// Say prints one line of the narrative (what the world did, or what the
// demo checked), indented.
func (e *Env) Say(format string, args ...any) {
	for _, line := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		fmt.Fprintf(e.Out, "  %s\n", line)
	}
}

// Trust is how the demo's instances find and trust the release: the
// store's production channel and the release's public key.
func (e *Env) Trust() bootgate.Trust {
	return bootgate.Trust{StoreURL: e.StoreURL, Release: e.Release, KeyPath: e.PublicKey}
}
