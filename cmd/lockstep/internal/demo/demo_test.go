package demo_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
	"github.com/lockstep-dev/lockstep/cmd/lockstep/internal/demo"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
)

// ran is one command a recorder ran: its environment, its arguments and
// all it wrote, stdout and stderr in the order written.
type ran struct {
	env, args []string
	out       string
	code      int
}

// recorder runs the real CLI (app.Run) and keeps what each run was and
// wrote.
type recorder struct{ runs []ran }

func (r *recorder) run(ctx context.Context, env, args []string, stdout, stderr io.Writer) int {
	var mu sync.Mutex
	var all bytes.Buffer
	code := app.Run(ctx, env, args, both{&mu, &all, stdout}, both{&mu, &all, stderr})
	r.runs = append(r.runs, ran{env: slices.Clone(env), args: slices.Clone(args), out: all.String(), code: code})
	return code
}

// both writes to all (under mu, shared by stdout and stderr) and to w.
type both struct {
	mu  *sync.Mutex
	all *bytes.Buffer
	w   io.Writer
}

func (b both) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.all.Write(p)
	b.mu.Unlock()
	return b.w.Write(p)
}

// shellWords is how /bin/sh splits line into words.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", "set -- "+line+`; for w; do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatalf("sh splitting %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

func TestRun(t *testing.T) {
	t.Setenv("COSIGN_PASSWORD", "")
	os.Unsetenv("COSIGN_PASSWORD")
	var out bytes.Buffer
	dir := t.TempDir()
	rec := &recorder{}
	if err := demo.Run(context.Background(), &out, demo.Options{Dir: dir, Run: rec.run}); err != nil {
		t.Fatalf("Run = %v\n%s", err, out.String())
	}
	got := out.String()
	checkTranscript(t, got, rec.runs)
	if _, ok := os.LookupEnv("COSIGN_PASSWORD"); ok {
		t.Error("the demo set COSIGN_PASSWORD in the process's environment")
	}
	for _, want := range []string{
		"[1/16] CI builds store v1", "$ lockstep pin --cache " + dir + "/pin-cache 127.0.0.1:",
		"$ lockstep keygen --output-key-prefix " + dir + "/cosign\n    " + dir + "/cosign.key\n    " + dir + "/cosign.pub\n",
		"$ lockstep record --release store-web --generation auto --store file://" + dir + "/store",
		"--check-cdn --sign-key " + dir + "/cosign.key --output " + dir + "/release-v1.json\n",
		"ok: checked 4 (4 files × 1 base): 4 ok", `msg="wrote the manifest" release=store-web@1`,
		"$ lockstep manifest verify --key " + dir + "/cosign.pub " + dir + "/release-v1.json\n    verified ",
		"    store-web production generation 1 sha256:",
		"DOCKER_HOST=unix://" + dir + "/instances/instance-1/docker.sock lockstep admit --store file://",
		"    ADMITTED against store-web@1 ",
		"$ lockstep pin --cache " + dir + "/pin-cache --previous " + dir + "/release-v1.json web=127.0.0.1:",
		"    lockstep: refusing 1 moved tag", "moved from sha256:",
		"    REFUSED against store-web@1 ", "refuse image-digest-mismatch", "refuse asset-not-in-manifest", "refuse asset-missing-on-cdn",
		"    missing  js/app.", "    lockstep: the CDN does not serve the release's assets",
		"    store-web production generation 2 sha256:", "    ADMITTED against store-web@2 ",
		"generation 1 is not newer than generation 2", "    generation  2\n",
		"as `cosign attest --type slsaprovenance1` does", "--require-provenance --provenance-key " + dir + "/builder/cosign.pub",
		`msg="verified the images' provenance"`, "provenance commit: the provenance names another commit",
		"demo complete: all 16 steps behaved as designed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the narrative lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "  (exit code 1)\n"); n != 5 {
		t.Errorf("%d commands said to exit 1, want 5 (moved tag, refused instance, CDN check, stale publisher, provenance):\n%s", n, got)
	}
	// What the demo left is what the commands wrote: a v1 signed with
	// the keygen key, a v2 of generation 2.
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

// checkTranscript checks that every `$ ` line of the narrative is, in
// order, a command the runner ran, as the shell would run it (every word,
// and the environment it shows), and that what follows it, indented, is
// exactly what that command wrote; and that no other line shows a command.
func checkTranscript(t *testing.T, transcript string, runs []ran) {
	t.Helper()
	lines := strings.Split(transcript, "\n")
	i := 0
	for n, line := range lines {
		if !strings.HasPrefix(strings.TrimSpace(line), "$") {
			continue
		}
		if !strings.HasPrefix(line, "  $ ") {
			t.Errorf("line %d shows a command outside the demo's form: %q", n+1, line)
			continue
		}
		if i >= len(runs) {
			t.Errorf("line %d shows a command the runner never ran: %q", n+1, line)
			continue
		}
		r := runs[i]
		i++
		var env []string
		for _, kv := range r.env {
			if kv == "COSIGN_PASSWORD="+demo.Password {
				continue
			}
			env = append(env, kv)
		}
		if !slices.Contains(r.env, "COSIGN_PASSWORD="+demo.Password) {
			t.Errorf("%q ran without the COSIGN_PASSWORD the demo says it has: env %q", line, r.env)
		}
		want := append(append(env, "lockstep"), r.args...)
		if words := shellWords(t, strings.TrimPrefix(line, "  $ ")); !slices.Equal(words, want) {
			t.Errorf("line %d, as the shell reads it, is %q; the runner ran %q", n+1, words, want)
		}
		var block []string
		for _, l := range lines[n+1:] {
			if l != "" && !strings.HasPrefix(l, "    ") {
				break
			}
			block = append(block, l)
		}
		var wantBlock []string
		for _, l := range strings.Split(strings.TrimSuffix(r.out, "\n"), "\n") {
			if l != "" {
				l = "    " + l
			}
			wantBlock = append(wantBlock, l)
		}
		if r.out == "" {
			wantBlock = nil
		}
		gotOut := strings.TrimRight(strings.Join(block, "\n"), "\n")
		if wantOut := strings.TrimRight(strings.Join(wantBlock, "\n"), "\n"); gotOut != wantOut {
			t.Errorf("under %q the narrative shows\n%s\nbut the command wrote\n%s", line, gotOut, wantOut)
		}
		if next := n + 1 + len(block); r.code != 0 && (next >= len(lines) || lines[next] != "  (exit code "+strconv.Itoa(r.code)+")") {
			t.Errorf("%q exited %d, which the narrative does not say", line, r.code)
		}
	}
	if i != len(runs) {
		t.Errorf("the runner ran %d commands, the narrative shows %d", len(runs), i)
	}
}

func TestQuote(t *testing.T) {
	args := []string{"plain", "", "two words", "it's", `"double"`, "$HOME", "*", "a;b", "#c", "~", "back\\slash", "new\nline", "web=127.0.0.1:5000/x:v1", "--flag=a b"}
	line := demo.CommandLine([]string{"DOCKER_HOST=unix:///a b/docker.sock"}, append([]string{"lockstep"}, args...))
	want := append([]string{"DOCKER_HOST=unix:///a b/docker.sock", "lockstep"}, args...)
	if got := shellWords(t, line); !slices.Equal(got, want) {
		t.Errorf("sh reads %q as %q, want %q", line, got, want)
	}
}

// without returns the demo's steps but those whose name starts with one
// of prefixes.
func without(steps []demo.Step, prefixes ...string) []demo.Step {
	var kept []demo.Step
	for _, s := range steps {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s.Name, p) }) {
			kept = append(kept, s)
		}
	}
	return kept
}

// quickSteps are the demo's steps with the release key a plain PEM pair
// instead of keygen's (which scrypt makes slow under the race detector):
// the failure tests are about the refusals, and record and admit take
// either kind.
func quickSteps() []demo.Step {
	steps := demo.Steps()
	for i, s := range steps {
		if strings.HasPrefix(s.Name, "a key pair") {
			steps[i].Run = func(_ context.Context, e *demo.Env) (err error) {
				e.Key, e.PublicKey, err = scenario.GenerateKey(e.Dir)
				return err
			}
		}
	}
	return steps
}

// Each refusal the demo shows must fail the demo when it does not come.
func TestRunFailsWhenARefusalDoesNotCome(t *testing.T) {
	tests := []struct {
		name     string
		steps    []demo.Step
		failStep string // the step that must fail, by prefix
		says     string
	}{
		// Without the re-push, the tag has not moved.
		{"no re-push", without(quickSteps(), "CI silently re-pushes"), "pin --previous", "the moved tag"},
		// Without the re-push and pin's refusal, the new instance runs v1's
		// image: no image-digest-mismatch.
		{"no re-push, no pin", without(quickSteps(), "CI silently re-pushes", "pin --previous"), "a new instance boots", "refused without image-digest-mismatch"},
		// With the new asset uploaded before v2 is recorded, there is
		// nothing for the CDN check to refuse.
		{"asset uploaded first", moveFirst(quickSteps(), "upload the new asset", "record the new build as v2"), "record the new build as v2", "record --check-cdn wrote"},
		// Without v2 published, the channel still names generation 1.
		{"no v2", without(quickSteps(), "upload the new asset", "the scale-up instance boots again"), "a delayed pipeline", "want a generation refusal"},
		// Without CI's attestation, record --require-provenance finds no
		// provenance: the release's own commit is refused too.
		{"no attestation", without(quickSteps(), "CI attests"), "record --require-provenance", "the provenance of the build's own commit was refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := demo.Run(context.Background(), &out, demo.Options{Steps: tt.steps, Run: app.Run})
			var se *demo.StepError
			if !errors.As(err, &se) || !strings.HasPrefix(se.Step, tt.failStep) {
				t.Fatalf("Run = %v, want a *StepError from the step %q\n%s", err, tt.failStep, out.String())
			}
			if !strings.Contains(out.String(), "NOT AS DESIGNED: ") || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("the failure does not say %q: %v\n%s", tt.says, err, out.String())
			}
		})
	}
}

// moveFirst returns steps with the step named first moved before the
// step named before.
func moveFirst(steps []demo.Step, first, before string) []demo.Step {
	var moved demo.Step
	var rest []demo.Step
	for _, s := range steps {
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

// The demo judges by what the CLI did: a refusal with the wrong exit
// code fails it, and so does a runner that runs nothing and says yes.
func TestRunJudgesTheCommands(t *testing.T) {
	tests := []struct {
		name string
		run  demo.Runner
		says string
	}{
		{"a refusal exits 3", func(ctx context.Context, env, args []string, stdout, stderr io.Writer) int {
			if code := app.Run(ctx, env, args, stdout, stderr); code != 1 {
				return code
			}
			return 3
		}, "exit code 3, want 1"},
		{"nothing runs, exit 0", func(context.Context, []string, []string, io.Writer, io.Writer) int { return 0 }, "pin the image by digest"},
		{"exit 0 for a refusal", func(ctx context.Context, env, args []string, stdout, stderr io.Writer) int {
			app.Run(ctx, env, args, stdout, stderr)
			return 0
		}, "was not refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := demo.Run(context.Background(), &out, demo.Options{Steps: quickSteps(), Run: tt.run})
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Run = %v, want a failure saying %q\n%s", err, tt.says, out.String())
			}
		})
	}
	if err := demo.Run(context.Background(), io.Discard, demo.Options{}); err == nil {
		t.Error("Run without a runner = nil, want an error")
	}
}

// TestRunLogLevel: the demo's --log-level is each command's, and the line
// printed says so; the flags' variables set in the environment, which the
// lines do not show, are named.
func TestRunLogLevel(t *testing.T) {
	var out bytes.Buffer
	rec := &recorder{}
	opts := demo.Options{Steps: demo.Steps()[:2], Run: rec.run, LogLevel: "debug", Inherited: []string{"LOCKSTEP_STORE", "LOCKSTEP_TLS_WARN"}}
	if err := demo.Run(context.Background(), &out, opts); err != nil {
		t.Fatalf("Run = %v\n%s", err, out.String())
	}
	checkTranscript(t, out.String(), rec.runs)
	if len(rec.runs) != 1 || !slices.Equal(rec.runs[0].args[:3], []string{"--log-level", "debug", "pin"}) {
		t.Fatalf("the runs: %+v, want one pin with --log-level debug", rec.runs)
	}
	if !strings.Contains(out.String(), "  $ lockstep --log-level debug pin ") || !strings.Contains(out.String(), "level=DEBUG") {
		t.Errorf("the narrative lacks the debug run of pin and its debug lines:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "Your environment sets LOCKSTEP_STORE, LOCKSTEP_TLS_WARN, which the commands read") {
		t.Errorf("the narrative does not name the inherited variables:\n%s", out.String())
	}
}
