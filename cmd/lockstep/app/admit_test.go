package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
	"github.com/lockstep-dev/lockstep/manifest"
)

// run runs lockstep with args and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	a := app.New()
	a.Writer, a.ErrWriter = &out, &errw
	err := a.RunContext(context.Background(), append([]string{"lockstep"}, args...))
	code := app.Exit(err, &errw)
	return code, out.String(), errw.String()
}

// noGitHub is the environment of a run outside GitHub Actions: every
// GITHUB_* variable lockstep reads, empty.
func noGitHub() []string {
	var env []string
	for _, k := range []string{"GITHUB_ACTIONS", "GITHUB_REPOSITORY", "GITHUB_SHA", "GITHUB_REF", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_SERVER_URL"} {
		env = append(env, k+"=")
	}
	return env
}

// runIn is run with env ("NAME=value") as the run's own environment
// (app.Run), so that a parallel test gives its run a password, a runtime's
// endpoint or an S3 server without setting the process's environment.
func runIn(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := app.Run(context.Background(), env, args, &out, &errw)
	return code, out.String(), errw.String()
}

type admitEnv struct {
	manifestPath string
	manifestURL  string
	probe        string
	config       manifest.Digest
	// stateDir is the trusted state (--state-dir) of the env's instance.
	stateDir string
	// image, cdn and files make more manifests of the release (manifest).
	image manifest.Image
	cdn   string
	files map[string]string
}

// manifest writes a manifest of release store-web, generation gen, of the
// env's image and assets, and returns its path.
func (e admitEnv) manifest(t *testing.T, gen int64) string {
	t.Helper()
	_, raw, err := scenario.Manifest("store-web", gen, []manifest.Image{e.image}, []string{e.cdn + "/"}, e.files)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("g%d.json", gen))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func newAdmitEnv(t *testing.T) admitEnv {
	t.Helper()
	return newAdmitEnvCDN(t, func(h http.Handler) *httptest.Server {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv
	})
}

// newAdmitEnvCDN is newAdmitEnv with the CDN started by serve (an HTTPS
// server, say).
func newAdmitEnvCDN(t *testing.T, serve func(http.Handler) *httptest.Server) admitEnv {
	t.Helper()
	files := scenario.Assets("v1", 3)
	dir := t.TempDir()
	if err := scenario.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	cdn := serve(http.FileServer(http.Dir(dir)))
	page := scenario.Page(cdn.URL, scenario.Paths(files))
	appSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	t.Cleanup(appSrv.Close)
	im, conf := webImage()
	_, raw, err := scenario.Manifest("store-web", 4, []manifest.Image{im}, []string{cdn.URL + "/"}, files)
	if err != nil {
		t.Fatal(err)
	}
	mdir := t.TempDir()
	path := filepath.Join(mdir, "release.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	msrv := httptest.NewServer(http.FileServer(http.Dir(mdir)))
	t.Cleanup(msrv.Close)
	return admitEnv{manifestPath: path, manifestURL: msrv.URL + "/release.json", probe: appSrv.URL + "/", config: conf,
		stateDir: filepath.Join(t.TempDir(), "state"), image: im, cdn: cdn.URL, files: files}
}

// webImage is the image the admit tests' instances run: release
// store-web's "web", one linux/amd64 manifest (digest 2222…, config
// 3333…), and the config digest a runtime reports for it.
func webImage() (manifest.Image, manifest.Digest) {
	md := manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64))
	conf := manifest.MustParseDigest("sha256:" + strings.Repeat("3", 64))
	return manifest.Image{Name: "web", Ref: "127.0.0.1:5000/web:v1", Repository: "127.0.0.1:5000/web", Digest: md,
		MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: md, Config: conf}}}, conf
}

func (e admitEnv) args(extra ...string) []string {
	return e.from([]string{"--manifest", e.manifestPath, "--release", "store-web"}, extra...)
}

// from is admit's arguments with the manifest source src (--manifest
// FILE, or --store URL --release NAME).
func (e admitEnv) from(src []string, extra ...string) []string {
	args := append([]string{"admit"}, src...)
	args = append(args, "--state-dir", e.stateDir, "--insecure-allow-unsigned", "--image", "web",
		"--running", "digest:"+e.config.String(), "--platform", "linux/amd64", "--probe", e.probe, "--timeout", "20s")
	return append(args, extra...)
}

func TestAdmit(t *testing.T) {
	t.Parallel()
	e := newAdmitEnv(t)
	report := filepath.Join(t.TempDir(), "decision.json")
	code, out, errs := run(t, e.args("--format", "json", "--report", report)...)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errs)
	}
	var d admission.Decision
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("stdout is not a JSON decision: %v\n%s", err, out)
	}
	if !d.Allowed || d.Release != "store-web" || d.Generation != 4 || len(d.Served) != 3 || !d.Unsigned {
		t.Errorf("decision = %+v", d)
	}
	b, err := os.ReadFile(report)
	if err != nil || !bytes.Equal(bytes.TrimSpace(b), bytes.TrimSpace([]byte(out))) {
		t.Errorf("--report holds %q (%v), want the JSON decision", b, err)
	}

	code, out, _ = run(t, e.args()...)
	if code != 0 || !strings.HasPrefix(out, "ADMITTED against store-web@4") || !strings.Contains(out, "UNSIGNED") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	if code, out, errs := run(t, append(e.args(), "--manifest", e.manifestURL)...); code != 0 {
		t.Errorf("--manifest URL: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestAdmitExitCodes(t *testing.T) {
	t.Parallel()
	e := newAdmitEnv(t)
	other := "digest:sha256:" + strings.Repeat("9", 64)
	tests := []struct {
		name string
		args []string
		code int
		say  string
	}{
		{"refused", append(e.args(), "--running", other), 1, "image-digest-mismatch"},
		{"tag only", append(e.args(), "--running", "digest:127.0.0.1:5000/web:v1"), 1, "image-not-pinned"},
		{"manifest missing", append(e.args(), "--manifest", e.manifestPath+".gone"), 3, "dependency-unreachable"},
		{"manifest URL down", append(e.args(), "--manifest", "http://127.0.0.1:1/release.json", "--timeout", "3s"), 3, "dependency-unreachable"},
		{"no running", []string{"admit", "--manifest", e.manifestPath, "--release", "store-web", "--state-dir", e.stateDir, "--insecure-allow-unsigned"}, 2, "--running is required"},
		{"bad running", append(e.args(), "--running", "k8s:web"), 2, "want docker"},
		{"bad platform", append(e.args(), "--platform", "linux"), 2, "--platform"},
		{"bad format", append(e.args(), "--format", "xml"), 2, "--format"},
		{"negative sample", append(e.args(), "--sample", "-1"), 2, "--sample"},
		{"sample and all", append(e.args(), "--sample", "3", "--all-assets"), 2, "exclusive"},
		{"hook without asg", append(e.args(), "--lifecycle-hook", "h"), 2, "--asg"},
		{"plain http manifest", append(e.args(), "--manifest", "http://releases.example.com/m.json"), 2, "https"},
		{"unsigned without the flag", []string{"admit", "--manifest", e.manifestPath, "--release", "store-web", "--state-dir", e.stateDir, "--running", other}, 2, "insecure-allow-unsigned"},
		{"max-age without a store", append(e.args(), "--max-age", "1h"), 2, "--max-age needs --store"},
		{"negative max-age", append(e.args(), "--max-age", "-1h"), 2, "--max-age must not be negative"},
		{"store without release", []string{"admit", "--store", "file://" + e.stateDir + "-store", "--state-dir", e.stateDir, "--insecure-allow-unsigned", "--running", other}, 2, "--release"},
		{"image the manifest lacks", append(e.args(), "--image", "api"), 2, `no image "api" (it has: web)`},
		{"image the manifest lacks, named", append(e.args(), "--image", "api"), 2, "image-not-named"},
		{"manifest without release", []string{"admit", "--manifest", e.manifestPath, "--state-dir", e.stateDir, "--insecure-allow-unsigned", "--running", other}, 2, "--manifest needs --release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(t, tt.args...)
			if code != tt.code || !strings.Contains(out+errs, tt.say) {
				t.Errorf("exit %d, want %d saying %q\nstdout:\n%s\nstderr:\n%s", code, tt.code, tt.say, out, errs)
			}
		})
	}
}

// TestAdmitAWS runs the CLI's real AWS wiring (config.LoadDefaultConfig,
// the SDK clients, IMDSv2) against local endpoints named by the SDK's
// standard environment variables.
func TestAdmitAWS(t *testing.T) {
	e := newAdmitEnv(t)
	const id = "i-0fedcba9876543210"
	cloud := awsfake.NewAWS(t, id)
	md := awsfake.NewIMDS(t, id, "us-west-2")
	t.Setenv("AWS_ENDPOINT_URL_AUTO_SCALING", cloud.URL)
	t.Setenv("AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2", cloud.URL)
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", md.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_REGION", "")
	tg := "arn:aws:elasticloadbalancing:us-west-2:111122223333:targetgroup/web/0123456789abcdef"
	code, out, errs := run(t, e.args("--lifecycle-hook", "boot", "--asg", "web-asg", "--target-group", tg)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	calls := cloud.Requests()
	if len(calls) != 2 || calls[0].Action != "RegisterTargets" || calls[0].Get("Targets.member.1.Id") != id ||
		calls[1].Action != "CompleteLifecycleAction" || calls[1].Get("LifecycleActionResult") != "CONTINUE" ||
		calls[1].Get("InstanceId") != id || calls[1].Get("AutoScalingGroupName") != "web-asg" {
		t.Errorf("AWS calls = %+v", calls)
	}
	if !strings.Contains(out, "complete-lifecycle-action web-asg/boot CONTINUE: done") {
		t.Errorf("the report does not show the action:\n%s", out)
	}

	// Refused: ABANDON, no registration, exit 1 (and the SDK given the
	// client at load time: no CA bundle).
	t.Setenv("AWS_CA_BUNDLE", "")
	cloud2 := awsfake.NewAWS(t, id)
	t.Setenv("AWS_ENDPOINT_URL_AUTO_SCALING", cloud2.URL)
	t.Setenv("AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2", cloud2.URL)
	code, out, _ = run(t, append(e.args("--lifecycle-hook", "boot", "--asg", "web-asg", "--target-group", tg), "--running", "digest:sha256:"+strings.Repeat("9", 64))...)
	calls = cloud2.Requests()
	if code != 1 || len(calls) != 1 || calls[0].Get("LifecycleActionResult") != "ABANDON" {
		t.Errorf("refused: exit %d, calls %+v\n%s", code, calls, out)
	}
}

// TestAdmitDocker reads the running digest from a Docker Engine API named
// by DOCKER_HOST (the run's own), as on an instance.
func TestAdmitDocker(t *testing.T) {
	t.Parallel()
	e := newAdmitEnv(t)
	good := runningtest.Container{ID: strings.Repeat("ab", 32), Name: "web", Reference: "127.0.0.1:5000/web:v1",
		ImageID: e.config.String(), RepoDigests: []string{"127.0.0.1:5000/web@sha256:" + strings.Repeat("2", 64)}, OS: "linux", Arch: "amd64"}
	repushed := good
	repushed.Name, repushed.ID, repushed.ImageID, repushed.RepoDigests = "web2", strings.Repeat("cd", 32), "sha256:"+strings.Repeat("7", 64), nil
	host, _ := runningtest.Docker(t, good, repushed)
	env := []string{"DOCKER_HOST=" + host}
	for _, tt := range []struct {
		running string
		code    int
	}{{"docker", 0}, {"docker:web", 0}, {"docker:web2", 1}, {"docker:gone", 3}} {
		code, out, errs := runIn(t, env, append(e.args(), "--running", tt.running)...)
		if code != tt.code {
			t.Errorf("--running %s: exit %d, want %d\n%s\n%s", tt.running, code, tt.code, out, errs)
		}
	}
}

// TestAdmitTwoImagesNoImage: a manifest of two images and an admit that
// does not say which one the instance runs is a usage error (exit 2,
// image-not-named) naming both, not a guess; with --image it is judged.
func TestAdmitTwoImagesNoImage(t *testing.T) {
	t.Parallel()
	e := newAdmitEnv(t)
	api := e.image
	api.Name, api.Ref, api.Repository = "api", "127.0.0.1:5000/api:v1", "127.0.0.1:5000/api"
	api.Digest = manifest.MustParseDigest("sha256:" + strings.Repeat("4", 64))
	api.Platforms = []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: api.Digest, Config: manifest.MustParseDigest("sha256:" + strings.Repeat("5", 64))}}
	_, raw, err := scenario.Manifest("store-web", 4, []manifest.Image{e.image, api}, []string{e.cdn + "/"}, e.files)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.manifestPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"admit", "--manifest", e.manifestPath, "--release", "store-web", "--state-dir", e.stateDir, "--insecure-allow-unsigned",
		"--running", "digest:" + e.config.String(), "--platform", "linux/amd64", "--probe", e.probe, "--timeout", "20s"}
	for _, format := range []string{"text", "json"} {
		code, out, errs := run(t, append(args, "--format", format)...)
		if code != app.ExitInvalid || !strings.Contains(out+errs, "image-not-named") || !strings.Contains(out+errs, "web") || !strings.Contains(out+errs, "api") {
			t.Errorf("--format %s, two images, no --image: exit %d, want 2 naming image-not-named, web and api\n%s\n%s", format, code, out, errs)
		}
		if strings.Contains(out, "ADMITTED") {
			t.Errorf("--format %s: admitted without knowing the image:\n%s", format, out)
		}
	}
	if entries, _ := os.ReadDir(e.stateDir); len(entries) != 0 {
		t.Errorf("a usage error wrote the trusted state: %v", entries)
	}
	if code, out, errs := run(t, append(args, "--image", "web")...); code != 0 {
		t.Errorf("--image web: exit %d, want 0\n%s\n%s", code, out, errs)
	}
	if entries, _ := os.ReadDir(e.stateDir); len(entries) == 0 {
		t.Errorf("the admission recorded nothing in %s: the check above that a usage error records nothing proves nothing", e.stateDir)
	}
}
