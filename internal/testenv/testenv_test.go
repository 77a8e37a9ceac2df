package testenv

import (
	"net/http"
	"os"
	"path/filepath"
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
