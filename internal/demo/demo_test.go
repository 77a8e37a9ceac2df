package demo

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	if err := Run(context.Background(), &out, Options{Dir: dir}); err != nil {
		t.Fatalf("Run = %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"[1/6] push an image", "$ lockstep pin 127.0.0.1:", "linux/amd64 manifest sha256:",
		"$ lockstep record --release store-web --generation 1", "release store-web@1: image web sha256:",
		"valid: store-web@1, sha256:", "now names sha256:",
		"$ lockstep pin --previous", "lockstep: image web: tag 127.0.0.1:", "moved: got sha256:", "(exit code 1)",
		"demo complete: all 6 steps behaved as designed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the narrative lacks %q:\n%s", want, got)
		}
	}
	if _, _, err := manifest.ReadFile(dir + "/release-v1.json"); err != nil {
		t.Errorf("the recorded manifest: %v", err)
	}
}

// Without the re-push, the tag has not moved: the refusal step must fail
// the demo, not pass it.
func TestRunFailsWhenTheRefusalDoesNotCome(t *testing.T) {
	var steps []Step
	for _, s := range Steps() {
		if s.Run != nil && !strings.HasPrefix(s.Name, "re-push") {
			steps = append(steps, s)
		}
	}
	var out bytes.Buffer
	err := Run(context.Background(), &out, Options{Steps: steps})
	var se *StepError
	if !errors.As(err, &se) || !strings.HasPrefix(se.Step, "pin --previous") {
		t.Fatalf("Run without the re-push = %v, want a *StepError from the pin --previous step\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "NOT AS DESIGNED: the moved tag") {
		t.Errorf("the narrative does not say what went wrong:\n%s", out.String())
	}
}

// A refusal with the wrong exit code fails the demo too.
func TestRunChecksTheExitCode(t *testing.T) {
	err := Run(context.Background(), &bytes.Buffer{}, Options{ExitCode: func(error) int { return 3 }})
	if err == nil || !strings.Contains(err.Error(), "exit code 3, want 1") {
		t.Errorf("Run with a refusal mapped to exit 3 = %v, want a failure", err)
	}
}
