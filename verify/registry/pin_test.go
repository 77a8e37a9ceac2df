package registry

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestPinIndex(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	var adds []mutate.IndexAddendum
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	idx := mutate.AppendManifests(empty.Index, adds...)
	ref := host + "/app:v1"
	tag, _ := name.NewTag(ref)
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	im, err := Pin(context.Background(), "web", ref, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	if im.Digest.String() != d.String() || im.Tag != "v1" {
		t.Errorf("Pin = %s tag %q, want %s tag v1", im.Digest, im.Tag, d)
	}
	if len(im.Platforms) != 2 {
		t.Fatalf("Pin gave %d platforms, want 2", len(im.Platforms))
	}
}
