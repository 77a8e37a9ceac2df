package sigtest

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// Registry is the tests' registry fake (memregistry: go-containerregistry's
// in-memory registry on a loopback port, counting the requests it serves)
// with helpers that push signed-test images and return digest references.
type Registry struct {
	*memregistry.Registry
}

// NewRegistry starts a Registry, closed when the test ends.
func NewRegistry(t testing.TB) *Registry {
	t.Helper()
	return &Registry{memregistry.New(t)}
}

// PushImage pushes a random image as repo:tag and returns its digest
// reference.
func (r *Registry) PushImage(t testing.TB, repo, tag string) name.Digest {
	t.Helper()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(r.Host + "/" + repo + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return ref.Context().Digest(d.String())
}

// PushIndex pushes an index of linux/amd64 and linux/arm64 images as
// repo:tag and returns the index's digest and the platforms' digests
// (keyed "linux/amd64", "linux/arm64").
func (r *Registry) PushIndex(t testing.TB, repo, tag string) (name.Digest, map[string]name.Digest) {
	t.Helper()
	ref, err := name.ParseReference(r.Host + "/" + repo + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	var idx v1.ImageIndex = empty.Index
	plats := map[string]name.Digest{}
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
		d, _ := img.Digest()
		plats["linux/"+arch] = ref.Context().Digest(d.String())
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	return ref.Context().Digest(d.String()), plats
}

// Pin pins d as the manifest image role, with verify/registry. A random
// image's empty config names no platform: it is taken as linux/amd64.
func Pin(t testing.TB, role string, d name.Digest) manifest.Image {
	t.Helper()
	im, err := registry.Pin(context.Background(), role, d.String(), registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range im.Platforms {
		if im.Platforms[i].OS == "" {
			im.Platforms[i].OS, im.Platforms[i].Architecture = "linux", "amd64"
		}
	}
	return *im
}
