package assets_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// Hash a build directory, leaving out Vite's build manifest.
func ExampleHash() {
	dir, _ := os.MkdirTemp("", "dist")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "assets"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".vite"), 0o755)
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html>"), 0o644)
	os.WriteFile(filepath.Join(dir, "assets", "app-1a2b.js"), []byte("console.log(1)"), 0o644)
	os.WriteFile(filepath.Join(dir, ".vite", "manifest.json"), []byte(`{}`), 0o644)

	r, err := assets.Hash(context.Background(), assets.Options{Dir: dir, Exclude: []string{".vite"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range r.Files {
		fmt.Println(f.Path, f.Size, f.SHA256[:12], f.ContentType)
	}
	fmt.Println("excluded", r.Excluded)
	fmt.Println("fingerprint", manifest.Fingerprint(r.Files))
	// Output:
	// assets/app-1a2b.js 14 0a286891c11c text/javascript; charset=utf-8
	// index.html 15 fe26c59e91ac text/html; charset=utf-8
	// excluded [.vite]
	// fingerprint sha256:19c3b9fb2d4018996e1417359d16ccd59dcb9b2b9eb468533c3ed32caf8f3fdd
}
