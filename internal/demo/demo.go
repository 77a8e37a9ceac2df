package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/memregistry"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify"
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
	// Dir keeps the demo's files (asset tree, manifests); "" uses a
	// temporary directory, removed afterwards.
	Dir string
	// Steps replaces Steps(), e.g. to run a part of the demo.
	Steps []Step
	// ExitCode maps an error to lockstep's exit code for the narrative;
	// nil maps a mismatch to 1, an unavailable dependency to 3, an invalid
	// input to 2.
	ExitCode func(error) int
	// PinPrevious is the check behind `lockstep pin --previous`: re-pin
	// every image of prev and refuse each tag that moved with a
	// *verify.MismatchError. nil re-pins with verify/registry and compares
	// with manifest.Diff.
	PinPrevious func(ctx context.Context, prev *manifest.Manifest) error
}

// Env is the world the steps share: the servers, the files, and what
// earlier steps produced.
type Env struct {
	// Out is the narrative.
	Out io.Writer
	// Registry is the in-memory registry; CDN the base URL of the local
	// CDN, which serves AssetDir.
	Registry *memregistry.Registry
	CDN      string
	AssetDir string
	// Dir holds the manifests the steps write.
	Dir string
	// Release is the release name; ImageRef the image's tag reference.
	Release  string
	ImageRef string
	// Manifest and ManifestPath are release v1 once recorded.
	Manifest     *manifest.Manifest
	ManifestPath string
	exitCode     func(error) int
	pinPrevious  func(ctx context.Context, prev *manifest.Manifest) error
}

// Steps is the demo, in order.
func Steps() []Step {
	return []Step{
		{"push an image: store/web:v1", pushImage},
		{"pin it by digest", pinImage},
		{"record release v1, generation 1: the image and every asset", recordRelease},
		{"validate the manifest", validateManifest},
		{"re-push other bytes under the same tag, silently", repushImage},
		{"pin --previous: the moved tag is refused", refuseMovedTag},
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
	assetDir, err := writeAssets(dir, "v1")
	if err != nil {
		return err
	}
	reg := memregistry.Start()
	defer reg.Close()
	cdn := httptest.NewServer(http.FileServer(http.Dir(assetDir)))
	defer cdn.Close()
	e := &Env{
		Out: w, Registry: reg, CDN: cdn.URL + "/", AssetDir: assetDir, Dir: dir,
		Release: "store-web", ImageRef: reg.Ref("store/web:v1"), exitCode: opts.ExitCode, pinPrevious: opts.PinPrevious,
	}
	if e.pinPrevious == nil {
		e.pinPrevious = func(ctx context.Context, prev *manifest.Manifest) error {
			return movedTags(ctx, prev, registryOptions())
		}
	}
	if e.exitCode == nil {
		e.exitCode = exitCode
	}
	steps := opts.Steps
	if steps == nil {
		steps = Steps()
	}
	fmt.Fprintf(w, "lockstep demo: the Epic Games Store outage of 2021-04-06, replayed on loopback\n")
	fmt.Fprintf(w, "  registry  %s (in memory)\n  cdn       %s (serving %s)\n", reg.Host, e.CDN, assetDir)
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

func exitCode(err error) int {
	var ve *manifest.ValidationError
	switch {
	case err == nil:
		return 0
	case verify.IsMismatch(err):
		return 1
	case errors.As(err, &ve):
		return 2
	}
	return 3
}
