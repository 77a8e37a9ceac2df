package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Manifest returns a valid signed manifest of release at generation gen;
// variant makes manifests of one generation differ. It is indented, so its
// bytes differ from its canonical encoding.
func Manifest(t testing.TB, release string, gen int64, variant string) *manifest.Signed {
	t.Helper()
	s, err := NewManifest(release, gen, variant)
	if err != nil {
		t.Fatalf("test manifest: %v", err)
	}
	return s
}

// NewManifest is Manifest for examples and benchmarks outside a test.
func NewManifest(release string, gen int64, variant string) (*manifest.Signed, error) {
	hexOf := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	key := fmt.Sprintf("%s/%d/%s", release, gen, variant)
	files := []manifest.File{{Path: "assets/app-" + hexOf(key)[:8] + ".js", Size: 10, SHA256: hexOf("file " + key)}}
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion,
		Kind:       manifest.Kind,
		Release:    manifest.Release{Name: release, Generation: gen, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(gen) * time.Minute)},
		Images: []manifest.Image{{
			Name: "web", Ref: "registry.test/web:v" + fmt.Sprint(gen), Repository: "registry.test/web", Tag: "v" + fmt.Sprint(gen),
			Digest:    manifest.MustParseDigest("sha256:" + hexOf("index "+key)),
			MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64",
				Digest: manifest.MustParseDigest("sha256:" + hexOf("manifest "+key)),
				Config: manifest.MustParseDigest("sha256:" + hexOf("config "+key))}},
		}},
		Assets: manifest.Assets{CDN: []string{"https://cdn.test/web/"}, Files: files, Fingerprint: manifest.Fingerprint(files)},
	}
	raw, err := m.Indent()
	if err != nil {
		return nil, err
	}
	return manifest.NewSigned(raw, "test")
}

// Signed returns s with a signature and a bundle (not real ones: the
// store keeps bytes, it does not verify them).
func Signed(s *manifest.Signed) *manifest.Signed {
	c := *s
	c.Signature = []byte("MEUCIQ" + s.Digest.Hex[:16] + "==")
	c.Bundle = []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","for":"` + s.Digest.String() + `"}`)
	return &c
}
