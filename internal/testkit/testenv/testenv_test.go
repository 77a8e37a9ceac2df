package testenv

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestServersStart(t *testing.T) {
	t.Run("registry", func(t *testing.T) {
		addr := Registry(t)
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET /v2/ = %s, want 200", resp.Status)
		}
	})
	t.Run("nginx", func(t *testing.T) {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello"), 0o644); err != nil {
			t.Fatal(err)
		}
		base := Nginx(t, root)
		resp, err := http.Head(base + "/a.txt")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ContentLength != 5 {
			t.Errorf("HEAD /a.txt = %s, %d bytes; want 200, 5", resp.Status, resp.ContentLength)
		}
	})
}

// TestStartRetriesATakenPort: the port chosen is taken before the server
// binds it (another test, another developer): the server exits early and
// is started again on another port.
func TestStartRetriesATakenPort(t *testing.T) {
	bin := Require(t, "nginx")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	var ports []int
	port := StartOnFreePort(t, func(port int) (*exec.Cmd, string) {
		ports = append(ports, port)
		if len(ports) == 1 {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		}
		conf := fmt.Sprintf("daemon off; master_process off; error_log %[1]s/logs/error.log; pid %[1]s/nginx.pid;\n"+
			"events {}\nhttp { access_log off; server { listen 127.0.0.1:%[2]d; return 204; } }\n", dir, port)
		path := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		return exec.Command(bin, "-p", dir, "-c", path), fmt.Sprintf("http://127.0.0.1:%d/", port)
	})
	if len(ports) != 2 || port != ports[1] || port == ports[0] {
		t.Fatalf("StartOnFreePort tried ports %v and returned %d; want a second, other port", ports, port)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("GET / = %s, want 204", resp.Status)
	}
}

// TestHowToInstall: a missing tool's message names the script that
// installs it, so that a contributor can get it without reading the tests.
func TestHowToInstall(t *testing.T) {
	for _, tt := range []struct{ name, script string }{
		{"ko", "scripts/install-release-tools.sh"},
		{"goreleaser", "scripts/install-release-tools.sh"},
		{"cosign", "scripts/install-deps.sh"},
		{"crane", "scripts/install-deps.sh"},
		{"nginx", "scripts/install-deps.sh installs it from Debian's packages"},
		{"chromium", "scripts/install-deps.sh installs it from Debian's packages"},
	} {
		if got := HowToInstall(tt.name); !strings.Contains(got, tt.script) {
			t.Errorf("HowToInstall(%q) = %q, want it to name %q", tt.name, got, tt.script)
		}
	}
	for _, n := range []string{"cosign", "staticcheck", "crane"} {
		raw, err := os.ReadFile("../../../scripts/install-deps.sh")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "gotool "+n+" ") {
			t.Errorf("scripts/install-deps.sh does not install %s, which HowToInstall says it does", n)
		}
	}
	for n := range releaseTools {
		raw, err := os.ReadFile("../../../scripts/install-release-tools.sh")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "gotool "+n+" ") {
			t.Errorf("scripts/install-release-tools.sh does not install %s, which HowToInstall says it does", n)
		}
	}
}
