package scripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubeAPIServerTool: scripts/lib/tools.sh's kube_apiserver uses the
// per-machine kube-apiserver when its --version says the pinned version
// (no build, only the clone's link), builds one when the cached binary is
// another version, and on a failed build keeps the cache as it was and
// links nothing. The build script is a stand-in here, so that nothing is
// downloaded.
func TestKubeAPIServerTool(t *testing.T) {
	tools, err := filepath.Abs(filepath.Join("lib", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	fake := func(path, version string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\necho 'Kubernetes "+version+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// stub writes the build script of a clone at dir: it counts its runs
	// in counter, takes pause, and makes a binary of version built (""
	// fails).
	stub := func(dir, counter, pause, built string) {
		t.Helper()
		build := "#!/bin/sh\necho run >> \"" + counter + "\"\nsleep " + pause + "\n"
		if built == "" {
			build += "exit 1\n"
		} else {
			build += "printf '#!/bin/sh\\necho \"Kubernetes " + built + "\"\\n' > \"$2\"; chmod +x \"$2\"\n"
		}
		script := filepath.Join(dir, "scripts", "lib", "build-kube-apiserver.sh")
		if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(script, []byte(build), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// install runs kube_apiserver v1.34.4 in the clone at dir.
	install := func(dir, cache string) (string, error) {
		cmd := exec.Command("bash", "-c", `. "$1" && kube_apiserver v1.34.4`, "bash", tools)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LOCKSTEP_CACHE="+cache)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// run installs in a clone at dir whose build makes version built (""
	// fails), counting its runs in dir/builds.
	run := func(dir, cache, built string) (string, error) {
		t.Helper()
		stub(dir, filepath.Join(dir, "builds"), "0", built)
		return install(dir, cache)
	}
	builds := func(dir string) int {
		b, _ := os.ReadFile(filepath.Join(dir, "builds"))
		return strings.Count(string(b), "run")
	}
	version := func(path string) string {
		out, _ := exec.Command(path, "--version").Output()
		return strings.TrimSpace(string(out))
	}

	dir, cache := t.TempDir(), t.TempDir()
	cached := filepath.Join(cache, "tools", "kube-apiserver@v1.34.4", "kube-apiserver")
	link := filepath.Join(dir, ".cache", "bin", "kube-apiserver")
	fake(cached, "v1.34.4")
	if out, err := run(dir, cache, "v1.34.4"); err != nil || builds(dir) != 0 {
		t.Fatalf("with the pinned version cached: %v, %d builds; want none\n%s", err, builds(dir), out)
	}
	if target, err := os.Readlink(link); err != nil || target != cached {
		t.Errorf("the clone's link = %q, %v; want %s", target, err, cached)
	}

	// Another version in the cache is rebuilt; a failed build leaves it.
	dir = t.TempDir()
	fake(cached, "v1.33.0")
	if out, err := run(dir, cache, ""); err == nil || !strings.Contains(out, "could not build kube-apiserver v1.34.4") {
		t.Errorf("a failed build: %v\n%s\nwant a failure saying so", err, out)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".cache", "bin", "kube-apiserver")); !os.IsNotExist(err) {
		t.Errorf("a failed build linked something: %v", err)
	}
	if v := version(cached); v != "Kubernetes v1.33.0" {
		t.Errorf("a failed build changed the cache: %q", v)
	}
	if out, err := run(dir, cache, "v1.34.0"); err == nil {
		t.Errorf("a build of the wrong version was accepted\n%s", out)
	}
	if out, err := run(dir, cache, "v1.34.4"); err != nil || builds(dir) != 3 || version(cached) != "Kubernetes v1.34.4" {
		t.Errorf("a rebuild: %v, %d builds, cache %q; want the new binary in place\n%s", err, builds(dir), version(cached), out)
	}
	if entries, _ := os.ReadDir(filepath.Join(cache, "tools")); len(entries) != 1 {
		t.Errorf("the cache holds %d entries, want the tool alone (no temporary folder left): %v", len(entries), entries)
	}

	// Two installs at once (two clones, or both install scripts) build it
	// once: the second waits on the tool's lock, then finds it built. The
	// stand-in build takes a second, so that the two overlap.
	cache = t.TempDir()
	cached = filepath.Join(cache, "tools", "kube-apiserver@v1.34.4", "kube-apiserver")
	counter := filepath.Join(cache, "builds")
	clones := []string{t.TempDir(), t.TempDir()}
	errs := make(chan error, len(clones))
	for _, dir := range clones {
		stub(dir, counter, "1", "v1.34.4")
		go func() {
			out, err := install(dir, cache)
			if err != nil {
				err = fmt.Errorf("%w\n%s", err, out)
			}
			errs <- err
		}()
	}
	for range clones {
		if err := <-errs; err != nil {
			t.Errorf("an install beside another: %v", err)
		}
	}
	if n := builds(cache); n != 1 {
		t.Errorf("two installs at once built it %d times, want once", n)
	}
	for _, dir := range clones {
		if target, err := os.Readlink(filepath.Join(dir, ".cache", "bin", "kube-apiserver")); err != nil || target != cached {
			t.Errorf("a clone's link = %q, %v; want %s", target, err, cached)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(cache, "tools")); len(entries) != 1 {
		t.Errorf("after two installs at once the cache holds %d entries, want the tool alone: %v", len(entries), entries)
	}
}
