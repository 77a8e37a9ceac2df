package scripts

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// releaseServer serves dist/ as GitHub serves a release's assets
// (/TAG/NAME), with the named files replaced by the given bytes.
func releaseServer(t *testing.T, s snapshot, replace map[string][]byte) (*httptest.Server, *requests) {
	t.Helper()
	tag := "/v" + s.Version + "/"
	got := &requests{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add(r)
		name, ok := strings.CutPrefix(r.URL.Path, tag)
		if !ok || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		if b, ok := replace[name]; ok {
			w.Write(b)
			return
		}
		http.ServeFile(w, r, filepath.Join(dist, name))
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

type scriptRun struct {
	code   int
	stdout string
	stderr string
}

func runScript(t *testing.T, shell, script string, env []string, args ...string) scriptRun {
	t.Helper()
	cmd := exec.Command(shell, append([]string{script}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := scriptRun{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestActionInstallsTheRelease(t *testing.T) {
	t.Parallel()
	s := loadSnapshot(t)
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary")
	}
	runnerArch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	tag := "v" + s.Version
	install := func(t *testing.T, url, cache string, env ...string) scriptRun {
		return runScript(t, "bash", "action-install.sh", append([]string{
			"RUNNER_OS=Linux", "RUNNER_ARCH=" + runnerArch, "RUNNER_TEMP=" + t.TempDir(), "RUNNER_TOOL_CACHE=" + cache,
			"INPUT_VERSION=" + tag, "INPUT_VERIFY_SIGNATURE=false", "INPUT_DOWNLOAD_URL=" + url, "INPUT_ALLOW_HTTP_DOWNLOAD=true",
		}, env...))
	}

	t.Run("the right archive, verified, then from the tool cache", func(t *testing.T) {
		srv, got := releaseServer(t, s, nil)
		cache := t.TempDir()
		r := install(t, srv.URL, cache)
		want := filepath.Join(cache, "lockstep", s.Version, runtime.GOARCH, "lockstep")
		if r.code != 0 || strings.TrimSpace(r.stdout) != want {
			t.Fatalf("install: exit %d, stdout %q, stderr %s; want %s", r.code, r.stdout, r.stderr, want)
		}
		if v := versionOf(t, want); v.Version != s.Version || v.Platform != "linux/"+runtime.GOARCH {
			t.Errorf("installed %+v, want %s for linux/%s", v, s.Version, runtime.GOARCH)
		}
		if fmt.Sprint(got.list()) != fmt.Sprintf("[/%s/checksums.txt /%s/%s]", tag, tag, s.archive("linux", runtime.GOARCH)) {
			t.Errorf("downloads %v", got.list())
		}
		// action.sh runs what it installed: record refuses generation 0 (exit 2), not an install failure.
		ar := runAction(t, "", t.TempDir(), map[string]string{"RELEASE": "web", "GENERATION": "0", "VERSION": tag, "DOWNLOAD_URL": srv.URL, "ALLOW_HTTP_DOWNLOAD": "true", "VERIFY_SIGNATURE": "false"},
			"RUNNER_OS=Linux", "RUNNER_ARCH="+runnerArch, "RUNNER_TOOL_CACHE="+cache)
		if !strings.Contains(ar.stderr, "from the tool cache") || ar.code != 2 || !strings.Contains(ar.stdout, "::error title=lockstep record::") {
			t.Errorf("action.sh with version %s: exit %d, stdout %q, stderr %s; want the cached release running record", tag, ar.code, ar.stdout, ar.stderr)
		}
		// From the tool cache, verified again: checksums.txt is fetched
		// afresh, the archive is not.
		got.reset()
		r = install(t, srv.URL, cache)
		if r.code != 0 || strings.TrimSpace(r.stdout) != want || fmt.Sprint(got.list()) != fmt.Sprintf("[/%s/checksums.txt]", tag) ||
			!strings.Contains(r.stderr, "from the tool cache") {
			t.Errorf("second install: exit %d, %q, downloads %v, stderr %s; want the tool cache", r.code, r.stdout, got.list(), r.stderr)
		}
	})

	t.Run("a bad checksum is refused and installs nothing", func(t *testing.T) {
		a := s.archive("linux", runtime.GOARCH)
		raw, err := os.ReadFile(filepath.Join(dist, a))
		if err != nil {
			t.Fatal(err)
		}
		raw[len(raw)/2] ^= 0xff
		srv, _ := releaseServer(t, s, map[string][]byte{a: raw})
		cache := t.TempDir()
		r := install(t, srv.URL, cache)
		if r.code != 1 || !strings.Contains(r.stderr, "want "+s.sums[a]) {
			t.Errorf("tampered archive: exit %d, stderr %s; want 1 and the checksum named", r.code, r.stderr)
		}
		assertEmpty(t, filepath.Join(cache, "lockstep", s.Version, runtime.GOARCH))
	})

	t.Run("a tampered checksums.txt against its pin is refused", func(t *testing.T) {
		srv, _ := releaseServer(t, s, nil)
		cache := t.TempDir()
		r := install(t, srv.URL, cache, "LOCKSTEP_CHECKSUMS_SHA256="+strings.Repeat("0", 64))
		if r.code != 1 || !strings.Contains(r.stderr, "checksums.txt") {
			t.Errorf("wrong pin: exit %d, stderr %s; want 1", r.code, r.stderr)
		}
		assertEmpty(t, filepath.Join(cache, "lockstep", s.Version, runtime.GOARCH))
		r = install(t, srv.URL, cache, "LOCKSTEP_CHECKSUMS_SHA256="+fileSHA256(t, filepath.Join(dist, "checksums.txt")))
		if r.code != 0 {
			t.Errorf("right pin: exit %d, stderr %s", r.code, r.stderr)
		}
	})

	t.Run("an unknown architecture or OS is refused", func(t *testing.T) {
		srv, got := releaseServer(t, s, nil)
		for _, env := range [][]string{{"RUNNER_ARCH=ARM"}, {"RUNNER_ARCH=X86"}, {"RUNNER_OS=Windows"}} {
			r := install(t, srv.URL, t.TempDir(), env...)
			if r.code != 2 || !strings.Contains(r.stderr, "has no lockstep release") {
				t.Errorf("%v: exit %d, stderr %s; want 2", env, r.code, r.stderr)
			}
		}
		// The Action reports it as a failed install step.
		ar := runAction(t, "", t.TempDir(), map[string]string{"RELEASE": "web", "GENERATION": "1", "VERSION": tag, "DOWNLOAD_URL": srv.URL, "ALLOW_HTTP_DOWNLOAD": "true"},
			"RUNNER_OS=Linux", "RUNNER_ARCH=ARM")
		if ar.code != 2 || !strings.Contains(ar.stdout, "::error title=lockstep install::") {
			t.Errorf("action.sh on an ARM runner: exit %d, stdout %q; want 2 and an install annotation", ar.code, ar.stdout)
		}
		if len(got.list()) != 0 {
			t.Errorf("downloads %v for an unsupported runner", got.list())
		}
	})

	t.Run("the action's major tag resolves to its newest release", func(t *testing.T) {
		// The API lists releases newest-created first, not by version; a
		// pre-release and another major never win (scripts/attack_action_test.go
		// has drafts, flagged pre-releases and forged tags). The snapshot is not a
		// release tag, so the resolved version's download is what shows
		// the choice.
		srv, got := releaseServer(t, s, nil)
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/repos/lockstep-dev/lockstep/releases" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, `[{"tag_name": "v0.10.0-rc.1", "draft": false, "prerelease": true}, {"tag_name": "v0.2.9", "draft": false, "prerelease": false},
				{"tag_name": "v1.0.0", "draft": false, "prerelease": false}, {"tag_name": "v0.10.0", "draft": false, "prerelease": false},
				{"tag_name": "v0.9.12", "draft": false, "prerelease": false}]`)
		}))
		defer api.Close()
		r := install(t, srv.URL, t.TempDir(), "INPUT_VERSION=", "ACTION_REF=v0", "LOCKSTEP_API_URL="+api.URL)
		if !strings.Contains(r.stderr, "v0 is release v0.10.0") {
			t.Errorf("@v0: stderr %s; want it resolved to v0.10.0", r.stderr)
		}
		if len(got.list()) == 0 || !strings.HasPrefix(got.list()[0], "/v0.10.0/") {
			t.Errorf("@v0 downloaded %v, want v0.10.0's files", got.list())
		}
		if r.code == 0 {
			t.Errorf("@v0 installed although v0.10.0 is not the snapshot the server holds: %s", r.stderr)
		}
		// The same, with the snapshot's own tag as the ref: installed.
		r = install(t, srv.URL, t.TempDir(), "INPUT_VERSION=", "ACTION_REF="+tag)
		if r.code != 0 || !strings.Contains(r.stderr, tag+" linux/"+runtime.GOARCH+" into ") {
			t.Errorf("@%s: exit %d, stderr %s; want it installed", tag, r.code, r.stderr)
		}
		none := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"tag_name": "v1.0.0", "draft": false, "prerelease": false}, {"tag_name": "v0.3.0-rc.1", "draft": false, "prerelease": true}]`)
		}))
		defer none.Close()
		r = install(t, srv.URL, t.TempDir(), "INPUT_VERSION=", "ACTION_REF=v0", "LOCKSTEP_API_URL="+none.URL)
		if r.code != 3 || !strings.Contains(r.stderr, "no published v0.x.y release") {
			t.Errorf("@v0 with no v0 release: exit %d, stderr %s; want 3", r.code, r.stderr)
		}
		r = install(t, srv.URL, t.TempDir(), "INPUT_VERSION=", "ACTION_REF=main")
		if r.code != 2 {
			t.Errorf("@main with no version: exit %d, stderr %s; want 2", r.code, r.stderr)
		}
	})
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("%s holds %v after a refused install", dir, entries)
	}
	if _, err := os.Stat(dir + ".complete"); err == nil {
		t.Errorf("%s.complete exists after a refused install", dir)
	}
}

func TestHookInstallsTheRelease(t *testing.T) {
	s := loadSnapshot(t)
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary")
	}
	srv, _ := releaseServer(t, s, nil)
	bin := filepath.Join(t.TempDir(), "bin", "lockstep")
	env := []string{"LOCKSTEP_VERSION=v" + s.Version, "LOCKSTEP_RELEASE_URL=" + srv.URL, "LOCKSTEP_ALLOW_HTTP=1", "LOCKSTEP_BIN=" + bin,
		"LOCKSTEP_ENV_FILE=/nonexistent", "LOCKSTEP_REPORT=" + filepath.Join(t.TempDir(), "admit.json")}

	// Installed, verified, then run: `admit` with no manifest is a usage error.
	r := runScript(t, "sh", "../deploy/hooks/lockstep-admit.sh", env)
	if r.code != 2 || !strings.Contains(r.stderr, "matches checksums.txt") {
		t.Fatalf("hook: exit %d, stderr %s; want the release installed and admit's usage error (2)", r.code, r.stderr)
	}
	if v := versionOf(t, bin); v.Version != s.Version {
		t.Errorf("installed %+v", v)
	}
	// A binary that is not the pinned one never runs.
	r = runScript(t, "sh", "../deploy/hooks/lockstep-admit.sh", append(env, "LOCKSTEP_SHA256="+strings.Repeat("0", 64)))
	if r.code != 3 || !strings.Contains(r.stderr, "not running it") {
		t.Errorf("hook with a wrong LOCKSTEP_SHA256: exit %d, stderr %s; want 3", r.code, r.stderr)
	}
}

func TestCloudInitInstallsTheRelease(t *testing.T) {
	s := loadSnapshot(t)
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary")
	}
	raw, err := os.ReadFile("../deploy/cloud-init/lockstep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ci struct {
		RunCmd []any `yaml:"runcmd"`
	}
	if err := yaml.Unmarshal(raw, &ci); err != nil {
		t.Fatal(err)
	}
	script, _ := ci.RunCmd[0].(string)
	if !strings.Contains(script, "https://github.com/lockstep-dev/lockstep/releases/download/$version") {
		t.Fatalf("the first runcmd is not the install: %q", script)
	}
	srv, _ := releaseServer(t, s, nil)
	run := func(t *testing.T, checksums string) (scriptRun, string) {
		dest := filepath.Join(t.TempDir(), "lockstep")
		sc := strings.NewReplacer(
			"version=v0.1.0", "version=v"+s.Version,
			"checksums_sha256=REPLACE-WITH-THE-SHA256-OF-checksums.txt", "checksums_sha256="+checksums,
			"https://github.com/lockstep-dev/lockstep/releases/download", srv.URL,
			"/usr/local/bin/lockstep", dest,
		).Replace(script)
		path := filepath.Join(t.TempDir(), "runcmd.sh")
		if err := os.WriteFile(path, []byte(sc+"echo installed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return runScript(t, "sh", path, nil), dest
	}
	r, dest := run(t, fileSHA256(t, filepath.Join(dist, "checksums.txt")))
	if r.code != 0 || !strings.HasSuffix(r.stdout, "installed\n") {
		t.Fatalf("cloud-init install: exit %d, %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if v := versionOf(t, dest); v.Version != s.Version || v.Platform != "linux/"+runtime.GOARCH {
		t.Errorf("installed %+v", v)
	}
	r, dest = run(t, strings.Repeat("0", 64))
	if r.code == 0 || strings.Contains(r.stdout, "installed") {
		t.Errorf("a wrong checksums.txt pin: exit %d, %q; want the rest of runcmd stopped", r.code, r.stdout)
	}
	if _, err := os.Stat(dest); err == nil {
		t.Error("a binary was installed despite the wrong checksum")
	}
}
