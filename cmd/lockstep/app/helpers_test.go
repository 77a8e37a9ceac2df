package app

import (
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// writeManifestFile writes m, indented, to path and returns path.
func writeManifestFile(t *testing.T, m *manifest.Manifest, path string) string {
	t.Helper()
	b, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitReady polls url until it answers 200, failing the test after 20 s or
// as soon as exited reports that the server's command ended (with why).
func waitReady(t *testing.T, client *http.Client, url string, exited func() (why string, ok bool)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if why, ok := exited(); ok {
			t.Fatalf("lockstep webhook exited %s before it was ready", why)
		}
		if time.Now().After(deadline) {
			t.Fatalf("lockstep webhook not ready: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitedOf is waitReady's exited for a command whose exit code arrives on
// done.
func exitedOf(done <-chan int) func() (string, bool) {
	return func() (string, bool) {
		select {
		case code := <-done:
			return strconv.Itoa(code), true
		default:
			return "", false
		}
	}
}
