// Package memregistry runs go-containerregistry's in-memory registry on a
// loopback httptest server, and pushes generated images to it or to any
// registry: the one registry fake of the tests and the Action's test.
// (`lockstep demo` runs its own, cmd/lockstep/internal/demo/servers, so that the binary
// links no test fake.)
package memregistry

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is a running in-memory registry.
type Registry struct {
	// Host is its host:port on 127.0.0.1; references under it use plain
	// HTTP, as go-containerregistry does for loopback registries.
	Host string
	// Server is the server; Close it to take the registry away.
	Server   *httptest.Server
	requests atomic.Int64
}

// Start starts a registry; Close stops it.
func Start() *Registry {
	r := &Registry{}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		h.ServeHTTP(w, req)
	}))
	r.Host = strings.TrimPrefix(r.Server.URL, "http://")
	return r
}

// New starts a registry that is closed when the test ends.
func New(t testing.TB) *Registry {
	t.Helper()
	r := Start()
	t.Cleanup(r.Close)
	return r
}

// Close stops the registry.
func (r *Registry) Close() { r.Server.Close() }

// Requests counts the requests the registry has served: the way a test
// proves that something sent none.
func (r *Registry) Requests() int64 { return r.requests.Load() }

// Ref returns host/repo:tag (repoTag is "repo:tag").
func (r *Registry) Ref(repoTag string) string { return r.Host + "/" + repoTag }

// PushImage pushes a new random linux/amd64 image (one layer of size
// bytes) under ref and returns it.
func PushImage(ref string, size int64) (v1.Image, error) {
	img, err := random.Image(size, 1)
	if err != nil {
		return nil, err
	}
	img, err = withPlatform(img, v1.Platform{OS: "linux", Architecture: "amd64"})
	if err != nil {
		return nil, err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return nil, err
	}
	if err := remote.Write(tag, img); err != nil {
		return nil, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return img, nil
}

// PushIndex pushes a new index of random images, one per platform
// ("os/arch[/variant]"), under ref and returns it.
func PushIndex(ref string, platforms ...string) (v1.ImageIndex, error) {
	var adds []mutate.IndexAddendum
	for _, p := range platforms {
		pl, err := v1.ParsePlatform(p)
		if err != nil {
			return nil, err
		}
		img, err := random.Image(64, 1)
		if err != nil {
			return nil, err
		}
		img, err = withPlatform(img, *pl)
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: pl}})
	}
	idx := mutate.AppendManifests(empty.Index, adds...)
	tag, err := name.NewTag(ref)
	if err != nil {
		return nil, err
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		return nil, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return idx, nil
}

// withPlatform sets the platform in img's config, keeping the rest.
func withPlatform(img v1.Image, p v1.Platform) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	return mutate.ConfigFile(img, cf)
}
