package scripts

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// actBinary is nektos/act: the clone's .cache/bin/act (scripts/install-deps.sh
// links it there), else one on the PATH; missing, the test skips (fails
// under LOCKSTEP_INTEGRATION=1).
func actBinary(t *testing.T) string {
	t.Helper()
	if p, err := filepath.Abs("../.cache/bin/act"); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return testenv.Require(t, "act")
}

// actJob is one `act push` of a workflow under testdata/act.
type actJob struct {
	code int
	log  string
}

// actRunner runs workflows under act in host mode (-P
// ubuntu-latest=-self-hosted: the steps run on this machine, no
// containers), with the Action taken from this checkout for every ref the
// workflows use, in a repository and a home (act's tool cache) of its own.
type actRunner struct {
	act, repo, home string
	// checkout is the Action's own files (actionCheckout), what
	// lockstep-dev/lockstep@REF resolves to.
	checkout string
	env      []string // --env KEY=VALUE for the job
}

func newActRunner(t *testing.T, act string, env ...string) *actRunner {
	t.Helper()
	r := &actRunner{act: act, repo: t.TempDir(), home: t.TempDir(), checkout: t.TempDir(), env: env}
	actionCheckout(t, r.checkout)
	wf := filepath.Join(r.repo, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/act/*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/act: %v, %d workflows", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wf, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "workflows"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.repo
		cmd.Env = append(os.Environ(), "HOME="+r.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return r
}

// toolCache is act's tool cache (RUNNER_TOOL_CACHE) for this runner's jobs.
func (r *actRunner) toolCache() string { return filepath.Join(r.home, ".cache", "act", "tool_cache") }

func (r *actRunner) run(t *testing.T, workflow string) actJob {
	t.Helper()
	args := []string{"push", "-W", ".github/workflows/" + workflow, "-P", "ubuntu-latest=-self-hosted"}
	for _, ref := range []string{"v1", "v1.6.0", "v1.7.0"} {
		args = append(args, "--local-repository", "lockstep-dev/lockstep@"+ref+"="+r.checkout)
	}
	for _, e := range r.env {
		args = append(args, "--env", e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.act, args...)
	cmd.Dir = r.repo
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.home, "XDG_CACHE_HOME=" + filepath.Join(r.home, ".cache")}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("act push %s: %v", workflow, time.Since(start).Round(10*time.Millisecond))
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("act: %v\n%s", err, out.String())
	}
	return actJob{code: code, log: out.String()}
}

// actionCheckout writes the Action as a workflow checks it out into dir:
// the files of the repository that action.yml runs (action.yml,
// scripts/*.sh, scripts/lib, deploy/hooks), copied from this checkout. act
// copies a --local-repository whole for every job and every ref; the clone
// itself, with a four-platform dist/ of some 470 MB, made each job take a
// minute.
func actionCheckout(t *testing.T, dir string) {
	t.Helper()
	for _, pattern := range []string{"action.yml", "scripts/*.sh", "scripts/lib/*", "deploy/hooks/*"} {
		matches, err := filepath.Glob(filepath.Join("..", pattern))
		if err != nil || len(matches) == 0 {
			t.Fatalf("%s matches nothing (%v)", pattern, err)
		}
		for _, m := range matches {
			rel, _ := filepath.Rel("..", m)
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(m)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestActionUnderAct runs the Action as users run it, under a real runner
// emulator: workflows that use lockstep-dev/lockstep@REF (this checkout),
// against a fake release server and releases API over https whose archives
// hold the real lockstep, a registry and a file store.
func TestActionUnderAct(t *testing.T) {
	t.Parallel()
	if runnerArch == "" || runtime.GOOS != "linux" {
		t.Skipf("no runner for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	act := actBinary(t)
	bin := buildLockstep(t)
	real, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	// One archive of the real binary serves every release: the tag is in
	// its name, not in its bytes.
	a := tarGz(t, real)
	release := func(tag string) map[string][]byte {
		return map[string][]byte{archiveName(tag): a, "checksums.txt": []byte(sha256Hex(a) + "  " + archiveName(tag) + "\n")}
	}
	releases := map[string]map[string][]byte{"v1.6.0": release("v1.6.0"), "v1.9.0": release("v1.9.0"), "v1.7.0": release("v1.7.0")}
	// v1.7.0's archive is not the one its checksums.txt names.
	releases["v1.7.0"][archiveName("v1.7.0")] = tarGz(t, fakeBinary("v1.7.0"))
	dl, _ := releasesServer(t, releases)
	api, _ := apiServer(t, `[{"tag_name":"v1.10.0","draft":true,"prerelease":false},`+
		`{"tag_name":"v1.9.5","draft":false,"prerelease":true},{"tag_name":"v2.0.0","draft":false,"prerelease":false},`+
		`{"tag_name":"v1.9.0","draft":false,"prerelease":false},{"tag_name":"v1.6.0","draft":false,"prerelease":false}]`)
	reg := memregistry.Start()
	t.Cleanup(reg.Close)
	image := reg.Ref("store/web:v1")
	if _, err := memregistry.PushImage(image, 256); err != nil {
		t.Fatal(err)
	}
	priv, _, err := scenario.GenerateKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(t.TempDir(), "store")
	env := []string{"DL=" + dl.URL, "LOCKSTEP_API_URL=" + api.URL, "CURL_CA_BUNDLE=" + caBundle(t, dl, api),
		"IMAGE=" + image, "STORE=" + storeDir, "KEY=" + priv}

	wantOK := func(t *testing.T, j actJob, wants ...string) {
		t.Helper()
		if j.code != 0 || !strings.Contains(j.log, "Job succeeded") {
			t.Fatalf("act: exit %d; want the job to succeed\n%s", j.code, j.log)
		}
		for _, w := range wants {
			if !strings.Contains(j.log, w) {
				t.Errorf("the job's log lacks %q\n%s", w, j.log)
			}
		}
	}
	cached := func(r *actRunner, tag string) string {
		return filepath.Join(r.toolCache(), "lockstep", strings.TrimPrefix(tag, "v"), runtime.GOARCH, "lockstep")
	}

	// The scenarios are independent: each has a runner (a repository, a
	// home and a tool cache) of its own, and they run in parallel, most
	// of a job being act and the runner's processes starting and waiting.
	// The release server, the API and the registry are shared; only the
	// last scenario moves the image's tag or writes the store.
	t.Run("install-only", func(t *testing.T) {
		t.Parallel()
		r := newActRunner(t, act, env...)
		j := r.run(t, "install-only.yml")
		// The installed binary runs: the test's build says it is not a
		// release ("lockstep dev …", or with the Go toolchain's VCS stamp
		// in a clean clone, "lockstep v0.0.0-DATE-COMMIT …").
		wantOK(t, j, "outputs: path="+cached(r, "v1.6.0")+" version=v1.6.0", "on the PATH: "+cached(r, "v1.6.0"),
			"(development build, not a release)")
	})

	t.Run("@v1 is the newest published v1.x.y", func(t *testing.T) {
		t.Parallel()
		r := newActRunner(t, act, env...)
		j := r.run(t, "resolve-major.yml")
		wantOK(t, j, "outputs: path="+cached(r, "v1.9.0")+" version=v1.9.0", "v1 is release v1.9.0")
	})

	t.Run("a bad checksum fails the job and installs nothing", func(t *testing.T) {
		t.Parallel()
		r := newActRunner(t, act, env...)
		j := r.run(t, "bad-checksum.yml")
		if j.code == 0 || !strings.Contains(j.log, "::error title=lockstep install::"+archiveName("v1.7.0")+" has SHA-256 ") {
			t.Errorf("act: exit %d; want a failed job with the install's own message\n%s", j.code, j.log)
		}
		if strings.Contains(j.log, "| a later step ran") {
			t.Error("a step after the refused install ran")
		}
		if _, err := os.Stat(filepath.Dir(cached(r, "v1.7.0"))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused release is in the tool cache: %v", err)
		}
	})

	channel := func(t *testing.T) int64 { return storeChannel(t, storeDir).Generation }

	// The second and third jobs install from the tool cache the first
	// filled (verified again: action-install.sh).
	t.Run("record and publish, then a moved tag is refused", func(t *testing.T) {
		t.Parallel()
		r := newActRunner(t, act, env...)
		j := r.run(t, "publish.yml")
		wantOK(t, j, "generation=1 version=v1.6.0")
		if g := channel(t); g != 1 {
			t.Fatalf("after the first publish the channel names generation %d, want 1", g)
		}
		j = r.run(t, "publish.yml")
		wantOK(t, j, "generation=2 version=v1.6.0", "v1.6.0 linux/"+runtime.GOARCH+" from the tool cache")
		// The tag moves: the next release is refused, and the channel stays.
		if _, err := memregistry.PushImage(image, 512); err != nil {
			t.Fatal(err)
		}
		j = r.run(t, "publish.yml")
		refusal := grepLines(j.log, "::error title=lockstep record::")
		if j.code == 0 || !strings.Contains(refusal, "refusing 1 moved tag (same tag, other bytes): web (") {
			t.Errorf("act: exit %d; want the moved tag refused in an annotation\n%s", j.code, j.log)
		}
		// The way out is named as the Action's input, not the CLI's flag.
		if !strings.Contains(refusal, "allow-moved-tag NAME") || strings.Contains(refusal, "--allow-moved-tag") {
			t.Errorf("the refusal names the flag, not the input allow-moved-tag: %s", refusal)
		}
		if g := channel(t); g != 2 {
			t.Errorf("after the refusal the channel names generation %d, want 2", g)
		}
	})
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
