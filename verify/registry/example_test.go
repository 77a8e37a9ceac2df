package registry_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

func ExamplePin() {
	// An in-memory registry on loopback holding one image, app:v1.
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/app:v1"
	img, _ := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "arm64"})
	tag, _ := name.NewTag(ref)
	if err := remote.Write(tag, img); err != nil {
		log.Fatal(err)
	}

	im, err := registry.Pin(context.Background(), "web", ref, registry.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.TrimPrefix(registry.Pinned(*im), tag.RegistryStr()))
	for _, p := range im.Platforms {
		fmt.Println(p, "config", p.Config)
	}
	// Output:
	// /app:v1@sha256:2a2fd0e33b84a1c1857e9bf8f03125f306cac0c0efd23bd10860057d8f69f3dd
	// linux/arm64 config sha256:8b1be2f3f24ce22daaba1fe503aa7e8ede2bac0ca7e9062f7041c32a7cbb1036
}

func ExampleMoved() {
	old := manifest.SHA256([]byte("release 41"))
	now := manifest.SHA256([]byte("re-pushed"))
	previous := &manifest.Manifest{Images: []manifest.Image{
		{Name: "web", Repository: "index.docker.io/library/nginx", Tag: "1.27", Digest: old},
	}}
	pinned := []manifest.Image{
		{Name: "web", Ref: "nginx:1.27", Repository: "index.docker.io/library/nginx", Tag: "1.27", Digest: now},
	}
	for _, m := range registry.Moved(previous, pinned, nil) {
		fmt.Println(m.Name, m.Tag, "moved; allowed:", m.Allowed)
	}
	for _, m := range registry.Moved(previous, pinned, []string{"docker.io/library/nginx:1.27"}) {
		fmt.Println(m.Name, m.Tag, "moved; allowed:", m.Allowed)
	}
	// Output:
	// web 1.27 moved; allowed: false
	// web 1.27 moved; allowed: true
}
