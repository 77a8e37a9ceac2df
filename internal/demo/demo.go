package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/demo/bootgate"
	"github.com/lockstep-dev/lockstep/internal/demo/servers"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/verdict"
)

// Step is one step of the demo.
type Step struct {
	// Name is what the step does, as the narrative titles it.
	Name string
	// Run does it, printing what lockstep said through e. It returns an
	// error when the step does not behave as designed.
	Run func(ctx context.Context, e *Env) error
}

// Options configure Run.
type Options struct {
	// Dir keeps the demo's files (build, CDN, store, keys, manifests); ""
	// uses a temporary directory, removed afterwards.
	Dir string
	// Steps replaces Steps(), e.g. to run a part of the demo.
	Steps []Step
	// ExitCode maps an error to lockstep's exit code for the narrative;
	// nil maps a mismatch or a generation refusal to 1, an invalid input
	// to 2, anything else to 3.
	ExitCode func(error) int
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
	// Key and PublicKey are the release's signing key pair (PEM files).
	Key, PublicKey string
	// Manifest and ManifestPath are release v1 once recorded.
	Manifest     *manifest.Manifest
	ManifestPath string
	// Served are the asset IDs the v1 build's page references.
	Served []string
	// Instances boots the instances whose boot gate runs.
	Instances *bootgate.Instances
	// Client carries every request the steps send.
	Client   *transport.Client
	exitCode func(error) int
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

// Run starts the registry and the CDN, runs the steps, and writes the
// narrative to w. It returns nil when every step behaved as designed, and
// a *StepError for the first that did not.
func Run(ctx context.Context, w io.Writer, opts Options) error {
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
		Client: transport.New(transport.DefaultPolicy()), exitCode: opts.ExitCode,
	}
	if e.exitCode == nil {
		e.exitCode = exitCode
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
	e.Instances = &bootgate.Instances{Dir: filepath.Join(dir, "instances"), Client: e.Client, Command: e.Command, Say: e.Say}
	defer e.Instances.Close()

	steps := opts.Steps
	if steps == nil {
		steps = Steps()
	}
	fmt.Fprintf(w, "lockstep demo: the Epic Games Store outage of 2021-04-06, replayed on loopback\n")
	fmt.Fprintf(w, "  registry  %s (in memory)\n  cdn       %s (serving %s)\n  store     %s\n", reg.Host, e.CDN, e.CDNDir, e.StoreURL)
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

// Command prints a lockstep command line as a user would type it.
func (e *Env) Command(args ...string) {
	fmt.Fprintf(e.Out, "  $ lockstep %s\n", strings.Join(args, " "))
}

// Say prints one line of what lockstep (or the world) said, indented.
func (e *Env) Say(format string, args ...any) {
	for _, line := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		fmt.Fprintf(e.Out, "    %s\n", line)
	}
}

// Refused prints a refusal as lockstep reports it, with its exit code, and
// returns an error unless the exit code is want.
func (e *Env) Refused(err error, want int) error {
	code := e.exitCode(err)
	e.Say("lockstep: %v", err)
	e.Say("(exit code %d)", code)
	if code != want {
		return fmt.Errorf("exit code %d, want %d: %w", code, want, err)
	}
	return nil
}

// Trust is how the demo's instances find and trust the release: the
// store's production channel and the release's public key.
func (e *Env) Trust() bootgate.Trust {
	return bootgate.Trust{Store: e.Store, StoreURL: e.StoreURL, Release: e.Release, KeyPath: e.PublicKey, KeyName: e.rel(e.PublicKey)}
}

func exitCode(err error) int {
	var ve *manifest.ValidationError
	var ge *manifest.GenerationError
	switch {
	case err == nil:
		return 0
	case verdict.IsMismatch(err), errors.As(err, &ge):
		return 1
	case errors.As(err, &ve):
		return 2
	}
	return 3
}
