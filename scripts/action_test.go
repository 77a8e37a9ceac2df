// Package scripts holds the test of the GitHub Action's script
// (action.sh), run with a simulated Actions environment.
package scripts

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/memregistry"
	"github.com/lockstep-dev/lockstep/manifest"
)

// buildLockstep builds the lockstep binary once for the test.
func buildLockstep(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lockstep")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/lockstep-dev/lockstep/cmd/lockstep")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type actionRun struct {
	code            int
	stdout, stderr  string
	output, summary string
}

// runAction runs action.sh in a fresh simulated GitHub Actions job with
// the given inputs (INPUT_* without the prefix).
func runAction(t *testing.T, bin, work string, inputs map[string]string) actionRun {
	t.Helper()
	tmp := t.TempDir()
	out, sum := filepath.Join(tmp, "github_output"), filepath.Join(tmp, "step_summary")
	for _, f := range []string{out, sum} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Relative paths in the inputs are relative to the job's workspace.
	script, err := filepath.Abs("action.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + tmp,
		"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + out, "GITHUB_STEP_SUMMARY=" + sum,
		"GITHUB_REPOSITORY=acme/store", "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567", "GITHUB_REF=refs/heads/main",
		"GITHUB_SERVER_URL=https://github.com", "GITHUB_RUN_ID=4242", "GITHUB_RUN_ATTEMPT=1",
		"RUNNER_TEMP=" + tmp, "LOCKSTEP_BIN=" + bin,
	}
	for k, v := range inputs {
		cmd.Env = append(cmd.Env, "INPUT_"+k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	o, _ := os.ReadFile(out)
	s, _ := os.ReadFile(sum)
	return actionRun{code: code, stdout: stdout.String(), stderr: stderr.String(), output: string(o), summary: string(s)}
}

func TestAction(t *testing.T) {
	bin := buildLockstep(t)
	reg := memregistry.Start()
	defer reg.Close()
	if _, err := memregistry.PushImage(reg.Ref("store/web:v1"), 256); err != nil {
		t.Fatal(err)
	}
	if _, err := memregistry.PushIndex(reg.Ref("store/api:v1"), "linux/amd64", "linux/arm64"); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for p, c := range map[string]string{"dist/index.html": "<html>", "dist/assets/app-1a2b.js": "js", "dist/.vite/manifest.json": "{}"} {
		if err := os.MkdirAll(filepath.Join(work, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inputs := map[string]string{
		"RELEASE": "store-web", "GENERATION": "3",
		"IMAGES": "web=" + reg.Ref("store/web:v1") + "\n  api=" + reg.Ref("store/api:v1") + "\n\n",
		"ASSETS": "dist", "EXCLUDE": ".vite\n.DS_Store", "CDN": "https://cdn.example/store/\nhttps://cdn2.example/store/", "OUTPUT": "release.json",
	}

	t.Run("records", func(t *testing.T) {
		r := runAction(t, bin, work, inputs)
		if r.code != 0 {
			t.Fatalf("action.sh: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		m, raw, err := manifest.ReadFile(filepath.Join(work, "release.json"))
		if err != nil {
			t.Fatal(err)
		}
		want := "manifest=release.json\ndigest=" + manifest.SHA256(raw).String() + "\n"
		if r.output != want {
			t.Errorf("GITHUB_OUTPUT = %q, want %q", r.output, want)
		}
		if len(m.Images) != 2 || len(m.Assets.Files) != 2 || len(m.Assets.CDN) != 2 {
			t.Errorf("manifest: %d images, %d files, %d CDN bases; want 2, 2, 2", len(m.Images), len(m.Assets.Files), len(m.Assets.CDN))
		}
		src := m.Release.Source
		if src == nil || src.Commit != "0123456789abcdef0123456789abcdef01234567" || src.WorkflowRunURL != "https://github.com/acme/store/actions/runs/4242" {
			t.Errorf("source = %+v, want the simulated run's", src)
		}
		for _, s := range []string{"### Release `store-web` generation 3", manifest.SHA256(raw).String(), "| web | `" + reg.Ref("store/web:v1") + "`", "linux/amd64, linux/arm64", "2 files"} {
			if !strings.Contains(r.summary, s) {
				t.Errorf("the job summary lacks %q:\n%s", s, r.summary)
			}
		}
		if strings.Contains(r.stdout, "::error") {
			t.Errorf("an ::error on success: %s", r.stdout)
		}
	})

	t.Run("follows the previous release", func(t *testing.T) {
		prev := filepath.Join(work, "release.json")
		in := copyInputs(inputs, "GENERATION", "4", "OUTPUT", "out/next.json", "PREVIOUS", prev)
		r := runAction(t, bin, work, in)
		if r.code != 0 || !strings.Contains(r.output, "manifest=out/next.json") || !strings.Contains(r.summary, "NEW can follow OLD") {
			t.Errorf("action.sh with a previous release: exit %d, output %q\nsummary:\n%s\nstderr:\n%s", r.code, r.output, r.summary, r.stderr)
		}
	})

	t.Run("refuses a generation that does not rise", func(t *testing.T) {
		in := copyInputs(inputs, "GENERATION", "2", "OUTPUT", "stale.json", "PREVIOUS", filepath.Join(work, "release.json"))
		r := runAction(t, bin, work, in)
		if r.code != 1 {
			t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "::error title=lockstep manifest diff::") || !strings.Contains(r.stdout, "generation 2 does not rise above generation 3") {
			t.Errorf("no ::error annotation naming the generation:\n%s", r.stdout)
		}
		if !strings.Contains(r.summary, "**refused**") || strings.Contains(r.output, "digest=") {
			t.Errorf("summary %q, outputs %q: want the refusal in the summary and no outputs", r.summary, r.output)
		}
	})

	t.Run("refuses a moved tag", func(t *testing.T) {
		if _, err := memregistry.PushImage(reg.Ref("store/web:v1"), 256); err != nil {
			t.Fatal(err)
		}
		in := copyInputs(inputs, "GENERATION", "5", "OUTPUT", "moved.json", "PREVIOUS", filepath.Join(work, "release.json"))
		r := runAction(t, bin, work, in)
		if r.code != 1 || !strings.Contains(r.stdout, "::error") || !strings.Contains(r.stdout, "tag "+reg.Ref("store/web:v1")+" moved") {
			t.Errorf("exit %d, want 1 with an ::error naming the moved tag\nstdout:\n%s", r.code, r.stdout)
		}
		in["ALLOW_MOVED_TAG"] = "web"
		if r := runAction(t, bin, work, in); r.code != 0 {
			t.Errorf("with allow-moved-tag web: exit %d\n%s", r.code, r.stdout)
		}
	})

	t.Run("fails when the registry is down", func(t *testing.T) {
		down := httptest.NewServer(nil)
		downHost := strings.TrimPrefix(down.URL, "http://")
		down.Close()
		in := copyInputs(inputs, "IMAGES", "web="+downHost+"/store/web:v1", "OUTPUT", "missing.json")
		r := runAction(t, bin, work, in)
		if r.code != 3 || !strings.Contains(r.stdout, "::error title=lockstep record::") || !strings.Contains(r.stdout, "pinning image web") {
			t.Errorf("exit %d, want 3 with an ::error naming the image\nstdout:\n%s", r.code, r.stdout)
		}
		if !strings.Contains(r.summary, "lockstep record failed (exit 3)") || r.output != "" {
			t.Errorf("summary %q, outputs %q", r.summary, r.output)
		}
		if _, err := os.Stat(filepath.Join(work, "missing.json")); !os.IsNotExist(err) {
			t.Errorf("a failed record left missing.json (%v)", err)
		}
	})

	t.Run("needs the release and generation", func(t *testing.T) {
		in := copyInputs(inputs, "RELEASE", "")
		if r := runAction(t, bin, work, in); r.code != 2 || !strings.Contains(r.stdout, "::error title=lockstep record::the release input is required") {
			t.Errorf("exit %d, want 2 with an ::error\n%s", r.code, r.stdout)
		}
	})
}

func copyInputs(in map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
