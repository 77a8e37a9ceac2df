package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// outputs parses $GITHUB_OUTPUT's NAME=VALUE lines.
func outputs(s string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			out[k] = v
		}
	}
	return out
}

// TestActionInstallOnly runs the Action with install-only as a job runs it:
// the verified release's directory lands on $GITHUB_PATH, outputs path and
// version name it, the binary is not run, and a later step finds it on the
// PATH.
func TestActionInstallOnly(t *testing.T) {
	t.Parallel()
	if runnerArch == "" {
		t.Skipf("no runner architecture for %s", runtime.GOARCH)
	}
	releases := map[string]map[string][]byte{"v1.6.0": fakeRelease(t, "v1.6.0"), "v1.9.0": fakeRelease(t, "v1.9.0")}
	dl, _ := releasesServer(t, releases)
	api, _ := apiServer(t, `[{"tag_name":"v2.0.0","draft":false,"prerelease":true},{"tag_name":"v1.9.0","draft":false,"prerelease":false},{"tag_name":"v1.6.0","draft":false,"prerelease":false}]`)
	ca := caBundle(t, dl, api)

	for _, tt := range []struct{ version, want string }{{"v1.6.0", "v1.6.0"}, {"v1", "v1.9.0"}} {
		t.Run(tt.version, func(t *testing.T) {
			cache, tmp := t.TempDir(), t.TempDir()
			ghPath, mark := filepath.Join(tmp, "github_path"), filepath.Join(tmp, "ran")
			os.WriteFile(ghPath, nil, 0o644)
			ar := runAction(t, "", t.TempDir(), map[string]string{"INSTALL_ONLY": "true", "VERSION": tt.version,
				"DOWNLOAD_URL": dl.URL, "VERIFY_SIGNATURE": "false"},
				installEnv(t, cache, ca, "GITHUB_PATH="+ghPath, "LOCKSTEP_API_URL="+api.URL, "FAKE_MARK="+mark)...)
			if ar.code != 0 {
				t.Fatalf("exit %d; want 0\nstdout: %s\nstderr: %s", ar.code, ar.stdout, ar.stderr)
			}
			out := outputs(ar.output)
			wantPath := filepath.Join(cache, "lockstep", strings.TrimPrefix(tt.want, "v"), runtime.GOARCH, "lockstep")
			if out["path"] != wantPath || out["version"] != tt.want {
				t.Errorf("outputs %q; want path %s and version %s", ar.output, wantPath, tt.want)
			}
			for _, k := range []string{"manifest", "digest", "generation"} {
				if _, ok := out[k]; ok {
					t.Errorf("install-only set output %s: %q", k, ar.output)
				}
			}
			p, _ := os.ReadFile(ghPath)
			if string(p) != filepath.Dir(wantPath)+"\n" {
				t.Errorf("GITHUB_PATH %q; want %q", p, filepath.Dir(wantPath)+"\n")
			}
			if _, err := os.Stat(mark); err == nil {
				t.Error("install-only ran the binary")
			}
			if !strings.Contains(ar.summary, "lockstep "+tt.want+" installed") {
				t.Errorf("summary %q; want the version installed", ar.summary)
			}
			// A later step: the runner puts GITHUB_PATH's lines before PATH.
			cmd := exec.Command("/bin/sh", "-c", "lockstep version")
			cmd.Env = []string{"PATH=" + strings.TrimSpace(string(p)) + ":/usr/bin:/bin"}
			b, _ := cmd.CombinedOutput()
			if !strings.Contains(string(b), "this is the fake release "+tt.want) {
				t.Errorf("a later step's lockstep: %q; want release %s", b, tt.want)
			}
		})
	}

	t.Run("a failed install says why and leaves nothing", func(t *testing.T) {
		bad := fakeRelease(t, "v1.6.0")
		bad[archiveName("v1.6.0")] = tarGz(t, []byte("#!/bin/sh\necho evil\n"))
		evil, _ := releasesServer(t, map[string]map[string][]byte{"v1.6.0": bad})
		cache, ghPath := t.TempDir(), filepath.Join(t.TempDir(), "github_path")
		os.WriteFile(ghPath, nil, 0o644)
		ar := runAction(t, "", t.TempDir(), map[string]string{"INSTALL_ONLY": "true", "VERSION": "v1.6.0",
			"DOWNLOAD_URL": evil.URL, "VERIFY_SIGNATURE": "false"},
			installEnv(t, cache, caBundle(t, evil), "GITHUB_PATH="+ghPath)...)
		want := "::error title=lockstep install::" + archiveName("v1.6.0") + " has SHA-256 "
		if ar.code != 1 || !strings.Contains(ar.stdout, want) || !strings.Contains(ar.stdout, "(checksums.txt)") {
			t.Errorf("exit %d, stdout %q; want 1 and the install's own message %q…", ar.code, ar.stdout, want)
		}
		if p, _ := os.ReadFile(ghPath); len(p) != 0 {
			t.Errorf("GITHUB_PATH %q after a refused install", p)
		}
		if ar.output != "" {
			t.Errorf("outputs %q after a refused install", ar.output)
		}
		if got := cacheFiles(t, cache); len(got) != 0 {
			t.Errorf("the tool cache holds %v after a refused install", got)
		}
	})

	t.Run("version local with no Go says how to get it", func(t *testing.T) {
		// The Action fetches no actions/setup-go: the job brings Go.
		bin := t.TempDir()
		for _, tool := range []string{"bash", "sed", "grep", "mktemp", "rm", "cat", "dirname", "tr", "mkdir", "tail"} {
			p, err := exec.LookPath(tool)
			if err != nil {
				t.Fatal(err)
			}
			os.Symlink(p, filepath.Join(bin, tool))
		}
		ar := runAction(t, "", t.TempDir(), map[string]string{"INSTALL_ONLY": "true", "VERSION": "local"},
			"PATH="+bin, "GITHUB_PATH="+filepath.Join(t.TempDir(), "github_path"))
		if ar.code != 3 || !strings.Contains(ar.stdout, "::error title=lockstep install::version: local builds lockstep") ||
			!strings.Contains(ar.stdout, "add actions/setup-go") {
			t.Errorf("exit %d, stdout %q; want 3 and an annotation saying to add actions/setup-go\nstderr: %s", ar.code, ar.stdout, ar.stderr)
		}
	})

	t.Run("bad mode inputs", func(t *testing.T) {
		for _, tt := range []struct {
			inputs map[string]string
			want   string
		}{
			{map[string]string{"INSTALL_ONLY": "yes"}, "::error title=lockstep::install-only yes: want true or false"},
			{map[string]string{"GENERATION": "1"}, "::error title=lockstep record::the release input is required (or set install-only: true"},
			{map[string]string{"RELEASE": "web"}, "::error title=lockstep record::the generation input is required"},
		} {
			ar := runAction(t, "/nonexistent/lockstep", t.TempDir(), tt.inputs)
			if ar.code != 2 || !strings.Contains(ar.stdout, tt.want) {
				t.Errorf("%v: exit %d, stdout %q; want 2 and %q", tt.inputs, ar.code, ar.stdout, tt.want)
			}
		}
	})
}

// TestActionAnnotationsNameInputs: a refusal's annotation names the
// Action's inputs the user set, not the CLI flags action.sh passed.
func TestActionAnnotationsNameInputs(t *testing.T) {
	bin := buildLockstep(t)
	for _, tt := range []struct {
		inputs   map[string]string
		want     string
		notWants []string
	}{
		{map[string]string{"RELEASE": "web", "GENERATION": "0"},
			`::error title=lockstep record::generation "0": want an integer of at least 1`, []string{"--generation"}},
		{map[string]string{"RELEASE": "web", "GENERATION": "1", "ASSET_LIST": "dist/.vite/manifest.json"},
			"::error title=lockstep record::asset-list needs assets DIR", []string{"--asset-list", "--assets"}},
	} {
		ar := runAction(t, bin, t.TempDir(), tt.inputs)
		if ar.code != 2 || !strings.Contains(ar.stdout, tt.want) {
			t.Errorf("%v: exit %d, stdout %q; want 2 and %q\nstderr: %s", tt.inputs, ar.code, ar.stdout, tt.want, ar.stderr)
		}
		for _, nw := range tt.notWants {
			if strings.Contains(ar.stdout, nw) {
				t.Errorf("%v: the annotation names the flag %s: %q", tt.inputs, nw, ar.stdout)
			}
		}
	}
}
