// Package fleettest holds the fixtures the agent and fleet tests share: a
// release manifest with known digests and assets.
package fleettest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// The digests of the fixture's image "web".
var (
	Index    = digest("1")
	Amd64    = digest("2")
	Amd64Cfg = digest("3")
	Arm64    = digest("4")
	Arm64Cfg = digest("5")
	// Repushed is a digest that is not the manifest's: what a silently
	// re-pushed tag runs.
	Repushed = digest("9")
)

func digest(c string) manifest.Digest {
	return manifest.MustParseDigest("sha256:" + strings.Repeat(c, 64))
}

// Assets are the fixture's asset IDs.
var Assets = []string{"assets/app-1a2b.js", "assets/app-3c4d.css", "assets/logo-5e6f.svg", "index.html"}

// Manifest returns a valid manifest of release store-web at generation gen,
// with image web (an index over linux/amd64 and linux/arm64) and Assets.
func Manifest(gen int64) *manifest.Manifest {
	files := make([]manifest.File, len(Assets))
	for i, p := range Assets {
		files[i] = manifest.File{Path: p, Size: int64(10 + i), SHA256: fmt.Sprintf("%064x", i+1)}
	}
	return &manifest.Manifest{
		APIVersion: manifest.APIVersion,
		Kind:       manifest.Kind,
		Release:    manifest.Release{Name: "store-web", Generation: gen, CreatedAt: time.Date(2021, 4, 5, 12, 0, 0, 0, time.UTC)},
		Images: []manifest.Image{{
			Name: "web", Ref: "registry.example/store/web:v1", Repository: "registry.example/store/web", Tag: "v1",
			Digest:    Index,
			MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []manifest.Platform{
				{OS: "linux", Architecture: "amd64", Digest: Amd64, Config: Amd64Cfg},
				{OS: "linux", Architecture: "arm64", Digest: Arm64, Config: Arm64Cfg},
			},
		}},
		Assets: manifest.Assets{CDN: []string{"https://cdn.example/store/"}, Files: files, Fingerprint: manifest.Fingerprint(files)},
	}
}

// Signed returns Manifest(gen) encoded and parsed back, as a source yields
// it.
func Signed(t testing.TB, gen int64) *manifest.Signed {
	t.Helper()
	return SignedOf(t, Manifest(gen))
}

// SignedOf returns m encoded and parsed back, as a source yields it.
func SignedOf(t testing.TB, m *manifest.Manifest) *manifest.Signed {
	t.Helper()
	raw, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.NewSigned(raw, "fixture")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Golden compares got with the golden file at path, after rewriting it
// when update is set (the tests' -update flag).
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run with -update): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
