package demo

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	if err := Run(context.Background(), &out, Options{Dir: dir}); err != nil {
		t.Fatalf("Run = %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"[1/16] CI builds store v1", "$ lockstep pin 127.0.0.1:", "linux/amd64 manifest sha256:",
		"$ lockstep record --release store-web --generation auto --store file://", "--check-cdn --sign-key cosign.key --output release-v1.json",
		"ok: checked 4 (4 files × 1 base): 4 ok", "release store-web@1: image web sha256:", "signed: release-v1.json.sig",
		"$ lockstep manifest verify --key cosign.pub release-v1.json", "store-web production generation 1 sha256:",
		"ADMITTED (exit 0): store-web generation 1",
		"$ lockstep pin --previous release-v1.json", "lockstep: refusing 1 moved tag", "moved from sha256:",
		"REFUSED (exit 1): store-web generation 1", "image-digest-mismatch:", "asset-not-in-manifest:", "asset-missing-on-cdn:",
		"missing  js/app.", "lockstep: the CDN does not serve the release's assets",
		"store-web production generation 2 sha256:", "ADMITTED (exit 0): store-web generation 2",
		"generation 1 is not newer than generation 2",
		"$ cosign attest --key cosign.key --type slsaprovenance1", "--require-provenance --provenance-key cosign.pub",
		"the release's commit (the manifest goes to stdout)", "provenance commit: the provenance names another commit",
		"demo complete: all 16 steps behaved as designed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the narrative lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "(exit code 1)"); n != 4 {
		t.Errorf("%d refusals said with exit code 1, want 4 (moved tag, CDN check, stale publisher, provenance):\n%s", n, got)
	}
	// What the demo left is what the commands would have: a signed v1
	// that verifies with the public key.
	key, err := signature.LoadVerifier(context.Background(), filepath.Join(dir, "cosign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewVerifier(signature.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.VerifyFile(context.Background(), v, filepath.Join(dir, "release-v1.json"), "", ""); err != nil {
		t.Errorf("the recorded v1 does not verify: %v", err)
	}
	if m, _, err := manifest.ReadFile(filepath.Join(dir, "release-v2.json")); err != nil || m.Release.Generation != 2 {
		t.Errorf("release-v2.json: generation %v, %v; want 2", m, err)
	}
}

// without returns the demo's steps but those whose name starts with one
// of prefixes.
func without(prefixes ...string) []Step {
	var steps []Step
	for _, s := range Steps() {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s.Name, p) }) {
			steps = append(steps, s)
		}
	}
	return steps
}

// Each refusal the demo shows must fail the demo when it does not come.
func TestRunFailsWhenARefusalDoesNotCome(t *testing.T) {
	tests := []struct {
		name     string
		steps    []Step
		failStep string // the step that must fail, by prefix
		says     string
	}{
		// Without the re-push, the tag has not moved.
		{"no re-push", without("CI silently re-pushes"), "pin --previous", "the moved tag"},
		// Without the re-push and pin's refusal, the new instance runs v1's
		// image: no image-digest-mismatch.
		{"no re-push, no pin", without("CI silently re-pushes", "pin --previous"), "a new instance boots", "refused without image-digest-mismatch"},
		// With the new asset uploaded before v2 is recorded, there is
		// nothing for the CDN check to refuse.
		{"asset uploaded first", moveFirst("upload the new asset", "record the new build as v2"), "record the new build as v2", "record --check-cdn wrote"},
		// Without v2 published, the channel still names generation 1.
		{"no v2", without("upload the new asset", "the scale-up instance boots again"), "a delayed pipeline", "names generation 1 after the stale publish, want 2"},
		// Without CI's attestation, record --require-provenance finds no
		// provenance: the release's own commit is refused too.
		{"no attestation", without("CI attests"), "record --require-provenance", "the provenance of the build's own commit was refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), &out, Options{Steps: tt.steps})
			var se *StepError
			if !errors.As(err, &se) || !strings.HasPrefix(se.Step, tt.failStep) {
				t.Fatalf("Run = %v, want a *StepError from the step %q\n%s", err, tt.failStep, out.String())
			}
			if !strings.Contains(out.String(), "NOT AS DESIGNED: ") || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("the failure does not say %q: %v\n%s", tt.says, err, out.String())
			}
		})
	}
}

// moveFirst returns the demo's steps with the step named first moved
// before the step named before.
func moveFirst(first, before string) []Step {
	var moved Step
	var rest []Step
	for _, s := range Steps() {
		if strings.HasPrefix(s.Name, first) {
			moved = s
			continue
		}
		rest = append(rest, s)
	}
	for i, s := range rest {
		if strings.HasPrefix(s.Name, before) {
			return slices.Insert(rest, i, moved)
		}
	}
	return rest
}

// A refusal with the wrong exit code fails the demo too.
func TestRunChecksTheExitCode(t *testing.T) {
	err := Run(context.Background(), &bytes.Buffer{}, Options{ExitCode: func(error) int { return 3 }})
	if err == nil || !strings.Contains(err.Error(), "exit code 3, want 1") {
		t.Errorf("Run with a refusal mapped to exit 3 = %v, want a failure", err)
	}
}
