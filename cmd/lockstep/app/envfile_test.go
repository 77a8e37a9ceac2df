package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/testkit/systemdtest"
)

// envLine is a line of an environment file: an assignment or a comment.
var envLine = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*=.*|#.*|\s*)$`)

// documentedEnvFiles returns every environment file the docs show, by
// where it is: the fenced blocks of README.md and docs/ whose every line is
// an assignment or a comment (with a LOCKSTEP_ one), the shipped
// deploy/packaging/admit.env (as shipped, and with its settings
// uncommented, as a user edits it) and the .env files cloud-init writes.
func documentedEnvFiles(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..", "..")
	out := map[string]string{}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	fence := regexp.MustCompile("(?ms)^```[a-z]*\n(.*?)^```")
	for _, p := range docs {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range fence.FindAllStringSubmatch(string(raw), -1) {
			block := m[1]
			if !regexp.MustCompile(`(?m)^LOCKSTEP_[A-Z0-9_]+=`).MatchString(block) {
				continue
			}
			env := true
			for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
				env = env && envLine.MatchString(line)
			}
			if env {
				rel, _ := filepath.Rel(root, p)
				out[fmt.Sprintf("%s block %d", rel, i+1)] = block
			}
		}
	}
	shipped, err := os.ReadFile(filepath.Join(root, "deploy", "packaging", "admit.env"))
	if err != nil {
		t.Fatal(err)
	}
	out["deploy/packaging/admit.env"] = string(shipped)
	out["deploy/packaging/admit.env, uncommented"] = regexp.MustCompile(`(?m)^#(LOCKSTEP_)`).ReplaceAllString(string(shipped), "$1")
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "cloud-init", "lockstep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ci struct {
		WriteFiles []struct{ Path, Content string } `yaml:"write_files"`
	}
	if err := yaml.Unmarshal(raw, &ci); err != nil {
		t.Fatal(err)
	}
	for _, f := range ci.WriteFiles {
		if strings.HasSuffix(f.Path, ".env") {
			out["deploy/cloud-init/lockstep.yaml "+f.Path] = f.Content
		}
	}
	for _, want := range []string{"README.md block", "docs/boot-gate.md block", "deploy/cloud-init/lockstep.yaml /etc/lockstep/admit.env"} {
		found := false
		for name := range out {
			found = found || strings.HasPrefix(name, want)
		}
		if !found {
			t.Errorf("no environment file found in %s", want)
		}
	}
	return out
}

// Issue 36, "configuration files that can be pasted": every environment
// file the docs show is loaded as systemd loads an EnvironmentFile=, by
// systemd's own parser, and admit and agent run with that environment:
// their flags parse and the run goes on to the first check of its own
// (--timeout 0s, --interval 0s: a usage error of that flag, not of the
// environment). And a value that ends in an inline comment, which systemd
// keeps, is refused before any flag reads it (exit 2, saying why), a
// duration's included.
func TestDocumentedEnvFiles(t *testing.T) {
	files := documentedEnvFiles(t)
	setEnv := func(t *testing.T, env map[string]string) {
		for k, v := range env {
			t.Setenv(k, v)
		}
	}
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			env := systemdtest.LoadEnvFile(t, content, "LOCKSTEP_")
			if regexp.MustCompile(`(?m)^LOCKSTEP_`).MatchString(content) && len(env) == 0 {
				t.Fatalf("systemd read no LOCKSTEP_ variable from:\n%s", content)
			}
			for k, v := range env {
				if strings.Contains(v, "#") || v != strings.TrimSpace(v) {
					t.Errorf("systemd reads %s as %q", k, v)
				}
			}
			setEnv(t, env)
			state := filepath.Join(t.TempDir(), "state")
			args := []string{"admit", "--state-dir", state, "--timeout", "0s"}
			if env["LOCKSTEP_RUNNING"] == "" {
				args = append(args, "--running", "docker:app")
			}
			if code, _, stderr := run(t, args...); code != 2 || !strings.Contains(stderr, "--timeout and --tls-warn must be positive") {
				t.Errorf("admit with this environment: exit %d, want its flags accepted up to --timeout's own check:\n%s", code, stderr)
			}
			if code, _, stderr := run(t, "agent", "--interval", "0s"); code != 2 || !strings.Contains(stderr, "--interval and --watch-interval must be positive") {
				t.Errorf("agent with this environment: exit %d, want its flags accepted up to --interval's own check:\n%s", code, stderr)
			}
		})
	}

	// The README's block as it was: every commented line is refused.
	t.Run("inline comments are refused", func(t *testing.T) {
		for _, line := range []string{
			"LOCKSTEP_RUNNING=docker:app                  # the container to check, through /var/run/docker.sock",
			"LOCKSTEP_STORE=s3://releases/lockstep\t# where CI publishes",
			"LOCKSTEP_MAX_AGE=1h # a duration, which would not parse",
			"LOCKSTEP_LOG_LEVEL=info # the global flag",
		} {
			env := systemdtest.LoadEnvFile(t, "LOCKSTEP_RELEASE=store-web\n"+line+"\n", "LOCKSTEP_")
			k, _, _ := strings.Cut(line, "=")
			if !strings.Contains(env[k], "#") {
				t.Fatalf("systemd no longer keeps the inline comment of %q: %q", line, env[k])
			}
			for _, cmd := range []string{"admit", "agent"} {
				t.Run(cmd+" "+k, func(t *testing.T) {
					setEnv(t, env)
					code, _, stderr := run(t, cmd, "--state-dir", filepath.Join(t.TempDir(), "state"))
					if code != 2 || !strings.Contains(stderr, k+"=") || !strings.Contains(stderr, "systemd keeps inline comments in the value; put the comment on its own line") {
						t.Errorf("%s with %s: exit %d, want 2 saying why:\n%s", cmd, line, code, stderr)
					}
				})
			}
		}
		// A value with a '#' and no blank before it is no comment.
		setEnv(t, map[string]string{"LOCKSTEP_RUNNING": "docker:app", "LOCKSTEP_PROBE": "http://127.0.0.1:8080/#top"})
		if code, _, stderr := run(t, "admit", "--state-dir", filepath.Join(t.TempDir(), "state"), "--timeout", "0s"); code != 2 || !strings.Contains(stderr, "--timeout and --tls-warn") {
			t.Errorf("a fragment (#top) is refused as a comment: exit %d\n%s", code, stderr)
		}
	})
}
