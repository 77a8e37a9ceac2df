package scenario

import (
	"bytes"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// TestManifestDeterministic: the same arguments give the same bytes, also
// across a tick of the clock (the cause of TestAdmitStoreS3's random
// failures under load), and createdAt is Epoch plus the generation.
func TestManifestDeterministic(t *testing.T) {
	d := manifest.SHA256([]byte("image"))
	images := []manifest.Image{{Name: "web", Ref: "127.0.0.1:5000/web:v1@" + d.String(), Repository: "127.0.0.1:5000/web", Tag: "v1", Digest: d,
		MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: d, Config: manifest.SHA256([]byte("config"))}}}}
	build := func() (*manifest.Manifest, []byte) {
		m, raw, err := Manifest("store-web", 3, images, []string{"https://cdn.invalid/"}, map[string]string{"a.js": "a"})
		if err != nil {
			t.Fatal(err)
		}
		return m, raw
	}
	m, a := build()
	time.Sleep(1100 * time.Millisecond)
	if _, b := build(); !bytes.Equal(a, b) {
		t.Errorf("two manifests of the same arguments differ:\n%s\n%s", a, b)
	}
	if want := Epoch.Add(3 * time.Hour); !m.Release.CreatedAt.Equal(want) {
		t.Errorf("createdAt = %s, want %s", m.Release.CreatedAt, want)
	}
}
