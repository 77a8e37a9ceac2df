// Package testenv starts the real servers lockstep's integration tests run
// against (Debian's docker-registry, nginx), on loopback ports, for the
// life of a test.
//
// A missing binary skips the test, unless LOCKSTEP_INTEGRATION=1 (set by
// the test command, scripts/test.sh), where it fails it: CI must never pass
// by skipping.
package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Require returns the path of the named binary, or skips (fails, under
// LOCKSTEP_INTEGRATION=1) the test when it is not installed.
func Require(t testing.TB, name string, alt ...string) string {
	t.Helper()
	for _, n := range append([]string{name}, alt...) {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin"} {
			if p := filepath.Join(dir, n); isExec(p) {
				return p
			}
		}
	}
	if os.Getenv("LOCKSTEP_INTEGRATION") == "1" {
		t.Fatalf("%s is not installed: %s", name, HowToInstall(name))
	}
	t.Skipf("%s is not installed: %s", name, HowToInstall(name))
	return ""
}

// releaseTools are the tools scripts/install-release-tools.sh installs.
var releaseTools = map[string]bool{"goreleaser": true, "ko": true, "cyclonedx-gomod": true}

// goTools are the tools scripts/install-deps.sh builds from the Go module
// proxy once per machine.
var goTools = map[string]bool{"cosign": true, "staticcheck": true, "crane": true, "helm": true, "toxiproxy-server": true, "act": true}

// HowToInstall says how to get a tool the tests need: every one is
// installed by one of the project's scripts (scripts/test.sh runs both).
func HowToInstall(name string) string {
	switch {
	case name == "kube-apiserver":
		return "scripts/install-deps.sh builds it from k8s.io/kubernetes on the Go module proxy once per machine " +
			"(~/.cache/lockstep/tools/kube-apiserver@VERSION, about 15 CPU-minutes) and links it into .cache/bin; " +
			"or name one with LOCKSTEP_TEST_KUBE_APISERVER"
	case releaseTools[name]:
		return "scripts/install-release-tools.sh builds it from the Go module proxy once per machine (~/.cache/lockstep/tools) and links it into .cache/bin"
	case goTools[name]:
		return "scripts/install-deps.sh builds it from the Go module proxy once per machine (~/.cache/lockstep/tools) and links it into .cache/bin"
	default:
		return "scripts/install-deps.sh installs it from Debian's packages (scripts/test.sh runs it)"
	}
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs cmd until the test ends, and waits until url answers (any
// HTTP status) or fails the test after 20 s, with the tail of the
// server's output and what to do. Its output is logged on failure.
func Start(t testing.TB, cmd *exec.Cmd, url string) {
	t.Helper()
	if err := start(t, cmd, url); err != nil {
		t.Fatal(err)
	}
}

// attempts bounds the starts of a server on a fresh port.
const attempts = 3

// StartOnFreePort starts the server that build makes for a free loopback
// port, as Start does, and returns the port. A start that fails because
// the server exited early (most often the port, free when chosen, taken
// meanwhile by another test or developer) is tried again on another port,
// up to 3 times.
func StartOnFreePort(t testing.TB, build func(port int) (cmd *exec.Cmd, url string)) int {
	t.Helper()
	var err error
	for range attempts {
		port := FreePort(t)
		cmd, url := build(port)
		if err = start(t, cmd, url); err == nil {
			return port
		}
		var ee *earlyExit
		if !errors.As(err, &ee) {
			break
		}
		t.Logf("testenv: %v; trying another port", ee.short())
	}
	t.Fatal(err)
	return 0
}

// earlyExit is a server that exited before it answered.
type earlyExit struct {
	bin, out string
	err      error
}

func (e *earlyExit) short() string {
	return fmt.Sprintf("%s exited before answering (%v)", e.bin, e.err)
}

func (e *earlyExit) Error() string {
	return e.short() + ":\n" + tail(e.out) + "\n" + whatToDo(e.bin)
}

func tail(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

func whatToDo(bin string) string {
	return fmt.Sprintf("what to do: check that %s runs on its own (%s --help), that loopback ports can be bound, "+
		"and run scripts/install-deps.sh to install or repair it", bin, bin)
}

// start is Start returning its failure: an *earlyExit when the server
// exited before answering.
func start(t testing.TB, cmd *exec.Cmd, url string) error {
	t.Helper()
	var out SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	bin := filepath.Base(cmd.Path)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w\n%s", cmd.Path, err, whatToDo(bin))
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	stop := func() {
		cmd.Process.Kill()
		<-done
	}
	deadline := time.Now().Add(20 * time.Second)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return &earlyExit{bin: bin, out: out.String(), err: waitErr}
		default:
		}
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("%s output:\n%s", bin, out.String())
				}
			})
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return fmt.Errorf("%s did not answer on %s within 20 s:\n%s\n%s", cmd.Path, url, tail(out.String()), whatToDo(bin))
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers (a process's
// stdout and stderr, a logger) and the test reading it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Registry starts Debian's docker-registry (distribution) on a loopback
// port with a filesystem root in a temporary directory, and returns its
// host:port.
func Registry(t testing.TB) string {
	t.Helper()
	bin := Require(t, "docker-registry")
	dir := t.TempDir()
	port := StartOnFreePort(t, func(port int) (*exec.Cmd, string) {
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		conf := fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, filepath.Join(dir, "data"), addr)
		path := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		return exec.Command(bin, "serve", path), "http://" + addr + "/v2/"
	})
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// Nginx starts nginx on a loopback port serving root, with extra
// directives (optional) inside the server block, and returns its base URL
// ("http://127.0.0.1:PORT").
func Nginx(t testing.TB, root string, extra ...string) string {
	t.Helper()
	port := StartOnFreePort(t, nginx(t, root, extra...))
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// NginxAt is Nginx on the given loopback port, chosen beforehand (as
// FreePort does): a server that starts late where a client already
// waits for it.
func NginxAt(t testing.TB, port int, root string, extra ...string) string {
	t.Helper()
	cmd, url := nginx(t, root, extra...)(port)
	Start(t, cmd, url)
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// nginx returns the command that runs nginx serving root on a port.
func nginx(t testing.TB, root string, extra ...string) func(port int) (*exec.Cmd, string) {
	t.Helper()
	bin := Require(t, "nginx")
	dir := t.TempDir()
	for _, d := range []string{"tmp", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func(port int) (*exec.Cmd, string) {
		conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
error_log %[1]s/logs/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s/tmp;
  proxy_temp_path %[1]s/tmp;
  fastcgi_temp_path %[1]s/tmp;
  uwsgi_temp_path %[1]s/tmp;
  scgi_temp_path %[1]s/tmp;
  types { text/html html; text/css css; application/javascript js; application/json json; image/png png; image/svg+xml svg; }
  default_type application/octet-stream;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:%[2]d;
    root %[3]s;
    %[4]s
  }
}
`, dir, port, root, strings.Join(extra, "\n    "))
		path := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		return exec.Command(bin, "-p", dir, "-c", path), fmt.Sprintf("http://127.0.0.1:%d/", port)
	}
}

// S3 returns the S3 server scripts/test.sh starts (Ceph's radosgw, named
// by LOCKSTEP_TEST_S3_ENDPOINT) and its keys, or skips the test when none
// is set (fails it, under LOCKSTEP_INTEGRATION=1).
func S3(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	ep := os.Getenv("LOCKSTEP_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("LOCKSTEP_INTEGRATION") == "1" {
			t.Fatal("LOCKSTEP_TEST_S3_ENDPOINT is not set (scripts/test.sh starts radosgw and sets it)")
		}
		t.Skip("no S3 server: set LOCKSTEP_TEST_S3_ENDPOINT (scripts/radosgw.sh start DIR)")
	}
	return ep, os.Getenv("LOCKSTEP_TEST_S3_ACCESS_KEY"), os.Getenv("LOCKSTEP_TEST_S3_SECRET_KEY")
}

// Runtimes are the container runtimes scripts/runtimes.sh started.
type Runtimes struct {
	// Containerd is containerd's socket path; CRI its CRI endpoint
	// (unix://PATH); Docker dockerd's DOCKER_HOST (unix://PATH).
	Containerd, CRI, Docker string
}

// StartRuntimes starts containerd (with CRI) and dockerd with
// scripts/runtimes.sh in a short temporary directory, pulling from reg (a
// loopback host:port, or "" for none), for the life of the test. Where
// this machine cannot run them (not root, no mount namespace, no cgroups)
// it skips, saying why and what stands in (fallback); under
// LOCKSTEP_INTEGRATION=1 it says so on stderr too. A daemon that should
// start and does not fails the test.
func StartRuntimes(t testing.TB, reg, fallback string) Runtimes {
	t.Helper()
	for _, bin := range []string{"containerd", "containerd-shim-runc-v2", "runc", "dockerd"} {
		Require(t, bin)
	}
	cannot := func(why string) {
		t.Helper()
		if os.Getenv("LOCKSTEP_INTEGRATION") == "1" {
			fmt.Fprintf(os.Stderr, "%s: FALLBACK: the container runtimes cannot run here: %s\n  checked instead by %s\n", t.Name(), why, fallback)
		}
		t.Skipf("the container runtimes cannot run here: %s; %s stands in", why, fallback)
	}
	if os.Geteuid() != 0 {
		cannot("containerd and dockerd need root (run as root, as scripts/test.sh does in CI)")
	}
	script, err := repoFile("scripts/runtimes.sh")
	if err != nil {
		t.Fatal(err)
	}
	// Unix socket paths are short: a short directory under /tmp.
	dir, err := os.MkdirTemp("/tmp", "lsrt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			t.Logf("runtimes.sh stop: %v\n%s", err, b)
		}
		os.RemoveAll(dir)
	})
	args := []string{"start", dir}
	if reg != "" {
		args = append(args, reg)
	}
	if b, err := exec.Command(script, args...).CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 4 {
			cannot(strings.TrimSpace(string(b)))
		}
		t.Fatalf("scripts/runtimes.sh start: %v\n%s", err, b)
	}
	return Runtimes{Containerd: dir + "/containerd.sock", CRI: "unix://" + dir + "/containerd.sock", Docker: "unix://" + dir + "/docker.sock"}
}

// repoFile returns the absolute path of name, relative to the repository's
// root (the nearest directory above the working directory with a go.mod).
func repoFile(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(name)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory: cannot find %s", name)
		}
		dir = parent
	}
}

// CacheDir is the per-machine cache the project's scripts share between
// clones: $LOCKSTEP_CACHE, else lockstep under the user's cache folder
// ($XDG_CACHE_HOME or ~/.cache), as in scripts/release-snapshot.sh.
func CacheDir() (string, error) {
	if c := os.Getenv("LOCKSTEP_CACHE"); c != "" {
		return c, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "lockstep"), nil
}
