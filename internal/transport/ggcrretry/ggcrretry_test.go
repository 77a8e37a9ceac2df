package ggcrretry

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// TestOptions: go-containerregistry sends through the client's transport
// (its requests count in the client's Stats).
func TestOptions(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := transport.New(transport.DefaultPolicy())
	opts := Options(c)
	if err := remote.Write(ref, img, opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(ref, opts...); err != nil {
		t.Fatal(err)
	}
	if c.Stats().Requests == 0 {
		t.Errorf("remote.Write and Head sent %d requests through the client, want some", c.Stats().Requests)
	}
}
