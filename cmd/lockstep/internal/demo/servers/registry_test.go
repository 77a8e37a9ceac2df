package servers

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func startRegistry(t *testing.T) *Registry {
	t.Helper()
	r, err := StartRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRegistryRoundTrip pushes an image and an index with
// go-containerregistry's client, as the demo does, and reads them back by
// tag and by digest, blobs included.
func TestRegistryRoundTrip(t *testing.T) {
	r := startRegistry(t)
	img, err := random.Image(2048, 3)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag(r.Ref("store/web:v1"))
	if err := remote.Write(tag, img); err != nil {
		t.Fatalf("remote.Write: %v", err)
	}
	want, _ := img.Digest()
	got, err := remote.Image(tag)
	if err != nil {
		t.Fatalf("remote.Image: %v", err)
	}
	if d, _ := got.Digest(); d != want {
		t.Errorf("pulled %s, pushed %s", d, want)
	}
	layers, _ := got.Layers()
	for _, l := range layers { // reading a layer verifies its digest
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rc); err != nil {
			t.Errorf("reading a layer: %v", err)
		}
		rc.Close()
	}
	// A second push of the same image mounts nothing new and succeeds.
	if err := remote.Write(tag.Context().Tag("v1-again"), img); err != nil {
		t.Fatalf("second remote.Write: %v", err)
	}

	a, _ := random.Image(256, 1)
	b, _ := random.Image(256, 1)
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: a, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: b, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
	itag, _ := name.NewTag(r.Ref("store/api:v1"))
	if err := remote.WriteIndex(itag, idx); err != nil {
		t.Fatalf("remote.WriteIndex: %v", err)
	}
	desc, err := remote.Get(itag, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
	if err != nil {
		t.Fatal(err)
	}
	if wantIdx, _ := idx.Digest(); desc.Digest != wantIdx {
		t.Errorf("index by tag: %s, want %s", desc.Digest, wantIdx)
	}
	arm, err := desc.Image()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := arm.Digest(); d != mustDigest(t, b) {
		t.Errorf("the arm64 image is %s, want %s", d, mustDigest(t, b))
	}
	tags, err := remote.List(itag.Context())
	if err != nil || strings.Join(tags, ",") != "v1" {
		t.Errorf("tags = %v, %v; want [v1]", tags, err)
	}
	if r.Requests() == 0 {
		t.Error("Requests() = 0 after a push and a pull")
	}
}

func mustDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRegistryRefusesBadDigests: a blob or a manifest whose content is not
// its digest is refused, and nothing is stored.
func TestRegistryRefusesBadDigests(t *testing.T) {
	r := startRegistry(t)
	base := "http://" + r.Host + "/v2/store/web"
	wrong := "sha256:" + strings.Repeat("0", 64)
	for _, tt := range []struct {
		method, url string
		want        int
	}{
		{http.MethodPost, base + "/blobs/uploads/?digest=" + wrong, http.StatusBadRequest},
		{http.MethodPut, base + "/manifests/" + wrong, http.StatusBadRequest},
		{http.MethodGet, base + "/blobs/" + wrong, http.StatusNotFound},
		{http.MethodGet, base + "/manifests/" + wrong, http.StatusNotFound},
		{http.MethodPatch, base + "/blobs/uploads/nosuchupload", http.StatusNotFound},
		{http.MethodGet, "http://" + r.Host + "/v3/", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tt.method, tt.url, strings.NewReader("{}"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.url, res.StatusCode, tt.want)
		}
	}
}
