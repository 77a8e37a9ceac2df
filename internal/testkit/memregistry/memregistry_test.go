package memregistry

import (
	"context"
	"testing"

	"github.com/lockstep-dev/lockstep/verify/registry"
)

func TestPush(t *testing.T) {
	r := Start()
	defer r.Close()
	img, err := PushImage(r.Ref("a/web:v1"), 128)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := PushIndex(r.Ref("a/api:v1"), "linux/amd64", "linux/arm64/v8")
	if err != nil {
		t.Fatal(err)
	}
	web, err := registry.Pin(context.Background(), "web", r.Ref("a/web:v1"), registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	if web.Digest.String() != d.String() || web.Platforms[0].String() != "linux/amd64" {
		t.Errorf("pinned %s %s, want %s linux/amd64", web.Digest, web.Platforms[0], d)
	}
	api, err := registry.Pin(context.Background(), "api", r.Ref("a/api:v1"), registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, _ = idx.Digest()
	if api.Digest.String() != d.String() || len(api.Platforms) != 2 || api.Platforms[1].String() != "linux/arm64/v8" {
		t.Errorf("pinned %s %v, want %s with linux/amd64 and linux/arm64/v8", api.Digest, api.Platforms, d)
	}
	if r.Requests() == 0 {
		t.Error("Requests() = 0 after pushes and pins")
	}
}
