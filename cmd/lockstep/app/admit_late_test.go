//go:build unix

package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestAdmitWaitsForLateNginx is the boot a real instance has: the gate
// starts first, and the application (nginx, serving the build's page)
// comes up 3 seconds later on the port the gate probes. The gate waits for
// it within --timeout and admits, saying how long it waited; with a
// --timeout shorter than the delay it gives up (exit 3), and a page that
// turns out to be another build's is refused (exit 1) without waiting
// out the rest of the timeout.
func TestAdmitWaitsForLateNginx(t *testing.T) {
	// Parallel: the late port is held (reservePort) until nginx binds it,
	// and the bounds (waited 2 s or more of a 3 s lateness; a refusal in
	// 20 s of a 60 s timeout) hold beside other tests.
	t.Parallel()
	files := scenario.Assets("v1", 3)
	cdnDir, appDir, otherDir := t.TempDir(), t.TempDir(), t.TempDir()
	if err := scenario.WriteFiles(cdnDir, files); err != nil {
		t.Fatal(err)
	}
	cdn := testenv.Nginx(t, cdnDir)
	os.WriteFile(filepath.Join(appDir, "index.html"), []byte(scenario.Page(cdn, scenario.Paths(files))), 0o644)
	os.WriteFile(filepath.Join(otherDir, "index.html"), []byte(scenario.Page(cdn, []string{"assets/app-0000000000.js"})), 0o644)

	im, conf := webImage()
	_, raw, err := scenario.Manifest("store-web", 4, []manifest.Image{im}, []string{cdn + "/"}, files)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "release.json")
	os.WriteFile(path, raw, 0o644)

	admit := func(port int, timeout string) (int, string, string, time.Duration) {
		start := time.Now()
		code, out, errs := run(t, "admit", "--manifest", path, "--release", "store-web", "--state-dir", filepath.Join(t.TempDir(), "state"),
			"--insecure-allow-unsigned", "--image", "web", "--running", "digest:"+conf.String(), "--platform", "linux/amd64",
			"--probe", fmt.Sprintf("http://127.0.0.1:%d/", port), "--timeout", timeout, "--format", "json")
		return code, out, errs, time.Since(start)
	}
	type result struct {
		code      int
		out, errs string
		took      time.Duration
	}
	late := func(root, timeout string) result {
		port, release := reservePort(t)
		done := make(chan result, 1)
		go func() {
			code, out, errs, took := admit(port, timeout)
			done <- result{code, out, errs, took}
		}()
		time.Sleep(3 * time.Second) // the application's lateness, the scenario's
		select {
		case r := <-done:
			return r // gave up before the application came up
		default:
		}
		release()
		testenv.NginxAt(t, port, root)
		return <-done
	}

	r := late(appDir, "60s")
	var d admission.Decision
	if err := json.Unmarshal([]byte(r.out), &d); err != nil {
		t.Fatalf("not a JSON decision (exit %d): %v\n%s\n%s", r.code, err, r.out, r.errs)
	}
	if r.code != 0 || !d.Allowed {
		t.Fatalf("an application 3 s late: exit %d, want 0 (ADMITTED)\n%s\n%s", r.code, r.out, r.errs)
	}
	if d.Waited < 2*time.Second || d.Waited > r.took {
		t.Errorf("the decision says it waited %v (the command took %v), want about 3 s", d.Waited, r.took)
	}

	r = late(appDir, "1s")
	if r.code != 3 || !strings.Contains(r.out+r.errs, "dependency-unreachable") {
		t.Errorf("--timeout 1s, application 3 s late: exit %d, want 3 (could not verify)\n%s\n%s", r.code, r.out, r.errs)
	}

	r = late(otherDir, "60s")
	if r.code != 1 {
		t.Errorf("a late application serving another build: exit %d, want 1\n%s\n%s", r.code, r.out, r.errs)
	}
	if r.took > 20*time.Second {
		t.Errorf("the refusal took %v: a mismatch is final, not waited on to the --timeout of 60 s", r.took)
	}
}

// reservePort binds a loopback port without listening on it, for the life
// of the test: a client is refused there, as by a port no application
// serves yet, and no other server of the run can be given the port while
// the test waits (testenv.FreePort closes its socket at once, so the port
// is anyone's until the late server binds it). release closes the socket
// for the application to bind the port at once: one that never listened
// leaves no TIME_WAIT.
func reservePort(t *testing.T) (port int, release func()) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fd)
	var once sync.Once
	release = func() { once.Do(func() { syscall.Close(fd) }) }
	t.Cleanup(release)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*syscall.SockaddrInet4).Port, release
}
