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
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
		t.Fatalf("%s is not installed (scripts/test.sh installs it)", name)
	}
	t.Skipf("%s is not installed; run scripts/test.sh", name)
	return ""
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
// HTTP status) or fails the test after 20 s. Its output is logged on failure.
func Start(t testing.TB, cmd *exec.Cmd, url string) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(cmd.Path), out.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatalf("%s exited early:\n%s", cmd.Path, out.String())
		default:
		}
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not answer on %s within 20 s:\n%s", cmd.Path, url, out.String())
}

// Registry starts Debian's docker-registry (distribution) on a loopback
// port with a filesystem root in a temporary directory, and returns its
// host:port.
func Registry(t testing.TB) string {
	t.Helper()
	bin := Require(t, "docker-registry")
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
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
	Start(t, exec.Command(bin, "serve", path), "http://"+addr+"/v2/")
	return addr
}

// Nginx starts nginx on a loopback port serving root, with extra
// directives (optional) inside the server block, and returns its base URL
// ("http://127.0.0.1:PORT").
func Nginx(t testing.TB, root string, extra ...string) string {
	t.Helper()
	bin := Require(t, "nginx")
	dir := t.TempDir()
	port := FreePort(t)
	for _, d := range []string{"tmp", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
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
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	Start(t, exec.Command(bin, "-p", dir, "-c", path), base+"/")
	return base
}
