package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runEnv is Run with env, returning the exit code, stdout and stderr.
func runEnv(env []string, args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := Run(context.Background(), env, args, &out, &errw)
	return code, out.String(), errw.String()
}

// TestRunScopesTheEnvironment: a run in process takes COSIGN_PASSWORD from
// its own environment, which neither the process nor the next run sees; a
// variable it cannot scope to the run is refused before anything runs.
func TestRunScopesTheEnvironment(t *testing.T) {
	unsetPassword(t)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "release")
	pw := []string{"COSIGN_PASSWORD=in-process"}

	code, out, errs := runEnv(pw, "keygen", "--output-key-prefix", prefix)
	if code != 0 || out != prefix+".key\n"+prefix+".pub\n" {
		t.Fatalf("keygen with the run's COSIGN_PASSWORD: exit %d, stdout %q\n%s", code, out, errs)
	}
	if v, ok := os.LookupEnv("COSIGN_PASSWORD"); ok {
		t.Errorf("the run set the process's COSIGN_PASSWORD (%q)", v)
	}
	m := writeManifest(t, dir)
	if code, _, errs := runEnv(nil, "sign", "--key", prefix+".key", m); code != ExitInvalid || !strings.Contains(errs, "COSIGN_PASSWORD is not set") {
		t.Errorf("sign without the password, after a run that had it: exit %d, want 2 naming COSIGN_PASSWORD\n%s", code, errs)
	}
	if code, _, errs := runEnv([]string{"COSIGN_PASSWORD=another"}, "sign", "--key", prefix+".key", m); code != ExitInvalid || !strings.Contains(errs, "is COSIGN_PASSWORD the key's password") {
		t.Errorf("sign with a wrong password: exit %d, want 2\n%s", code, errs)
	}
	// The run's password wins over the process's.
	t.Setenv("COSIGN_PASSWORD", "the user's")
	if code, _, errs := runEnv(pw, "sign", "--key", prefix+".key", m); code != 0 {
		t.Fatalf("sign with the run's password: exit %d\n%s", code, errs)
	}
	if code, _, errs := runEnv(nil, "manifest", "verify", "--key", prefix+".pub", m); code != 0 {
		t.Errorf("verify what the run signed: exit %d\n%s", code, errs)
	}

	for _, env := range [][]string{{"LOCKSTEP_SIGN_KEY=" + prefix + ".key"}, {"COSIGN_PASSWORD"}, {"AWS_SECRET_ACCESS_KEY=s3cr3t"}} {
		other := filepath.Join(dir, "other")
		code, out, errs := runEnv(append(env, pw...), "keygen", "--output-key-prefix", other)
		name, value, _ := strings.Cut(env[0], "=")
		if code != ExitInvalid || out != "" || !strings.Contains(errs, "entry "+name+":") {
			t.Errorf("a run with %q: exit %d, stdout %q; want 2 naming it\n%s", env, code, out, errs)
		}
		if value != "" && strings.Contains(errs, value) {
			t.Errorf("the refusal of %q shows its value:\n%s", env, errs)
		}
		if _, err := os.Stat(other + ".key"); !os.IsNotExist(err) {
			t.Errorf("a run refused for %q wrote a key (%v)", env, err)
		}
	}
}
