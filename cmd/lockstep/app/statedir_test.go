package app

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateDirPermission is the default --state-dir as a user who may not
// write it: a usage error that names the flag that fixes it. As root
// (where every directory is writable) the CLI runs as nobody: this test
// binary, copied where nobody may run it, as TestStateDirHelper (building
// the lockstep binary for it cost 10-40 s of linking).
func TestStateDirPermission(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(t.TempDir(), "var-lib")
	if err := os.Mkdir(parent, 0o555); err != nil {
		t.Fatal(err)
	}
	args := []string{"admit", "--manifest", "/dev/null", "--release", "web", "--insecure-allow-unsigned",
		"--running", "digest:sha256:" + strings.Repeat("a", 64), "--state-dir", filepath.Join(parent, "lockstep")}
	code, errs := 0, ""
	if os.Geteuid() != 0 {
		code, _, errs = run(t, args...)
	} else {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("root without setpriv: cannot run as another user")
		}
		dir := t.TempDir()
		// The test's own directories (t.TempDir makes them 0700).
		for _, p := range []string{dir, filepath.Dir(dir), filepath.Dir(parent)} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for p := filepath.Dir(dir); p != "/"; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o001 == 0 {
				t.Skipf("%s is not searchable by nobody", p)
			}
		}
		bin := filepath.Join(dir, "app.test")
		if err := copyExecutable(os.Args[0], bin); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^TestStateDirHelper$")
		cmd.Env = append(os.Environ(), "LOCKSTEP_STATEDIR_HELPER="+strings.Join(args, "\x1f"))
		cmd.Stderr = &stderr
		err = cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running as nobody: %v\n%s", err, stderr.String())
		}
		code, errs = ee.ExitCode(), stderr.String()
	}
	if code != ExitInvalid || !strings.Contains(errs, "permission denied") || !strings.Contains(errs, "give --state-dir") {
		t.Errorf("admit with an unwritable --state-dir = exit %d, stderr %q; want exit 2 naming --state-dir", code, errs)
	}
}

// TestStateDirHelper is not a test: run by TestStateDirPermission as
// nobody (LOCKSTEP_STATEDIR_HELPER set to the arguments), it is lockstep:
// the run's stderr on stderr, its exit code as the process's.
func TestStateDirHelper(t *testing.T) {
	args := os.Getenv("LOCKSTEP_STATEDIR_HELPER")
	if args == "" {
		t.Skip("run by TestStateDirPermission")
	}
	code, _, errs := run(t, strings.Split(args, "\x1f")...)
	os.Stderr.WriteString(errs)
	os.Exit(code)
}

// copyExecutable copies the file src to dst, mode 0755.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
