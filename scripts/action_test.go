// Package scripts holds the test of the GitHub Action's script
// (action.sh), run with a simulated Actions environment.
package scripts

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// binDir holds the lockstep binary the tests share when this package
// built it (no $LOCKSTEP_TEST_BIN); TestMain removes it. buildMu guards it
// and bin: the tests run in parallel.
var (
	binDir, bin string
	buildMu     sync.Mutex
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildLockstep returns the lockstep binary (testenv.BuildLockstep), built
// once for all the tests.
func buildLockstep(t *testing.T) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin != "" {
		return bin
	}
	dir, err := os.MkdirTemp("", "lockstep-action-test-")
	if err != nil {
		t.Fatal(err)
	}
	p, err := testenv.BuildLockstep(dir)
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	binDir, bin = dir, p
	return bin
}

type actionRun struct {
	code            int
	stdout, stderr  string
	output, summary string
}

// runAction runs action.sh in a fresh simulated GitHub Actions job with
// the given inputs (INPUT_* without the prefix) and extra environment
// (KEY=VALUE).
func runAction(t *testing.T, bin, work string, inputs map[string]string, env ...string) actionRun {
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
	cmd.Env = append(cmd.Env, env...)
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
	t.Parallel()
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
	writeTree(t, work, map[string]string{"dist/index.html": "<html>", "dist/assets/app-1a2b.js": "js", "dist/.vite/manifest.json": "{}"})
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
		want := "manifest=release.json\ndigest=" + manifest.SHA256(raw).String() + "\ngeneration=3\npath=" + bin + "\nversion=unknown\n"
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
		downHost := testenv.RefusedAddr(t)
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

// TestActionPublish is the CI step the product describes: pin, record,
// check every asset on the CDN, sign, and publish with a rising
// generation (generation: auto) to a file store.
func TestActionPublish(t *testing.T) {
	t.Parallel()
	bin := buildLockstep(t)
	reg := memregistry.Start()
	defer reg.Close()
	if _, err := memregistry.PushImage(reg.Ref("store/web:v1"), 256); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	writeTree(t, work, map[string]string{"dist/index.html": "<html>", "dist/assets/app-1a2b.js": "js"})
	// The CDN serves the build, except one asset nobody uploaded.
	files := http.FileServer(http.Dir(filepath.Join(work, "dist")))
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/assets/late-9f8e.js" {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	defer cdn.Close()
	keys := t.TempDir()
	priv, pub, err := scenario.GenerateKey(keys)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := os.ReadFile(priv)
	if err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(t.TempDir(), "store")
	inputs := map[string]string{
		"RELEASE": "store-web", "GENERATION": "auto", "IMAGES": "web=" + reg.Ref("store/web:v1"),
		"ASSETS": "dist", "CDN": cdn.URL + "/", "CHECK_CDN": "true",
		"SIGN_KEY": string(pemKey), "STORE": "file://" + storeDir, "OUTPUT": "out/release.json",
	}
	channel := func() *manifest.Pointer { return storeChannel(t, storeDir) }
	verifySig := func(path string) {
		t.Helper()
		cmd := exec.Command(bin, "manifest", "verify", "--key", pub, path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("manifest verify --key cosign.pub %s: %v\n%s", path, err, out)
		}
	}

	for i, run := range []struct {
		in  map[string]string
		env []string
	}{
		{inputs, nil}, // the key as the secret's PEM
		{copyInputs(inputs, "SIGN_KEY", "env://COSIGN_PRIVATE_KEY"), []string{"COSIGN_PRIVATE_KEY=" + string(pemKey)}},
	} {
		gen := i + 1
		r := runAction(t, bin, work, run.in, run.env...)
		if r.code != 0 {
			t.Fatalf("action.sh publish #%d: exit %d\nstdout:\n%s\nstderr:\n%s", gen, r.code, r.stdout, r.stderr)
		}
		m, raw, err := manifest.ReadFile(filepath.Join(work, "out/release.json"))
		if err != nil {
			t.Fatal(err)
		}
		d := manifest.SHA256(raw)
		want := fmt.Sprintf("manifest=out/release.json\ndigest=%s\nsignature=out/release.json.sig\ngeneration=%d\npath=%s\nversion=unknown\n", d, gen, bin)
		if r.output != want || m.Release.Generation != int64(gen) {
			t.Errorf("publish #%d: GITHUB_OUTPUT = %q, manifest generation %d; want %q", gen, r.output, m.Release.Generation, want)
		}
		if p := channel(); p.Generation != int64(gen) || p.Digest != d {
			t.Errorf("publish #%d: the channel names generation %d %s, want %d %s", gen, p.Generation, p.Digest, gen, d)
		}
		verifySig(filepath.Join(work, "out/release.json"))
		if !strings.Contains(r.summary, fmt.Sprintf("channel `production` now names generation %d", gen)) {
			t.Errorf("the job summary does not say what was published:\n%s", r.summary)
		}
		if !strings.Contains(r.stderr, "2 ok") {
			t.Errorf("the log lacks the CDN check:\n%s", r.stderr)
		}
	}
	// The published manifest and its signature are in the store, as an
	// instance reads them, and verify with the public key.
	ctx := context.Background()
	st, err := filestore.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.ChannelSource{Store: st, Release: "store-web", Channel: "production"}.Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, err := signature.LoadVerifier(ctx, pub)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewVerifier(signature.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(ctx, s); err != nil || len(s.Signature) == 0 {
		t.Errorf("the store's generation 2 with its signature (%d bytes) does not verify: %v", len(s.Signature), err)
	}

	// previous: store. Someone re-pushes store/web:v1: the next run is
	// refused (exit 1) against what the channel names, and nothing moves.
	if _, err := memregistry.PushImage(reg.Ref("store/web:v1"), 300); err != nil {
		t.Fatal(err)
	}
	if r := runAction(t, bin, work, copyInputs(inputs, "PREVIOUS", "store")); r.code != 1 || !strings.Contains(r.stderr, "moved") {
		t.Errorf("previous: store after the tag moved: exit %d, want 1 naming the moved tag\n%s", r.code, r.stderr)
	}
	if p := channel(); p.Generation != 2 {
		t.Errorf("a refused run moved the channel to %d", p.Generation)
	}

	t.Run("refuses an asset that is not on the CDN and publishes nothing", func(t *testing.T) {
		late := filepath.Join(work, "dist/assets/late-9f8e.js")
		if err := os.WriteFile(late, []byte("late"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(late)
		r := runAction(t, bin, work, copyInputs(inputs, "OUTPUT", "out/late.json"))
		if r.code != 1 || !strings.Contains(r.stdout, "::error title=lockstep record::") || !strings.Contains(r.stdout, "assets/late-9f8e.js") {
			t.Errorf("exit %d, want 1 with an ::error naming the asset\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(work, "out/late.json")); !os.IsNotExist(err) {
			t.Errorf("a refused record left out/late.json (%v)", err)
		}
		if p := channel(); p.Generation != 2 || r.output != "" {
			t.Errorf("after the refusal the channel names generation %d (want 2), outputs %q (want none)", p.Generation, r.output)
		}
	})

	t.Run("embed-signatures refuses an unsigned image", func(t *testing.T) {
		r := runAction(t, bin, work, copyInputs(inputs, "EMBED_SIGNATURES", "true", "IMAGE_KEY", pub, "OUTPUT", "out/unsigned.json"))
		if r.code != 1 || !strings.Contains(r.stdout, "::error title=lockstep record::") || !strings.Contains(r.stdout, "embedding the images' signatures") {
			t.Errorf("exit %d, want 1 with an ::error\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if p := channel(); p.Generation != 2 {
			t.Errorf("after the refusal the channel names generation %d, want 2", p.Generation)
		}
	})

	t.Run("generation auto needs a store", func(t *testing.T) {
		r := runAction(t, bin, work, copyInputs(inputs, "STORE", ""))
		if r.code != 2 || !strings.Contains(r.stdout, "generation: auto needs the store input") {
			t.Errorf("exit %d, want 2 with an ::error\n%s", r.code, r.stdout)
		}
	})

	t.Run("a sign-key env variable that is not set", func(t *testing.T) {
		r := runAction(t, bin, work, copyInputs(inputs, "SIGN_KEY", "env://NOPE"))
		if r.code != 2 || !strings.Contains(r.stdout, "the environment variable NOPE is not set") {
			t.Errorf("exit %d, want 2 with an ::error\n%s", r.code, r.stdout)
		}
	})
}

// writeTree writes files (path: contents) under root.
// storeChannel is what the production channel of store-web names in the
// file store at dir.
func storeChannel(t *testing.T, dir string) *manifest.Pointer {
	t.Helper()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Channel(context.Background(), "store-web", "production")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
