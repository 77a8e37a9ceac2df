package record_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/record"
)

// Record a release of one image and two assets: the image is pinned in a
// registry (here an in-memory one), the assets are hashed from a directory.
func ExampleManifest() {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/store/web:v1"
	img, _ := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64"})
	tag, _ := name.NewTag(ref)
	if err := remote.Write(tag, img); err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "assets")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html>"), 0o644)
	os.WriteFile(filepath.Join(dir, "app-1a2b.js"), []byte("console.log('v1')"), 0o644)

	m, err := record.Manifest(context.Background(), record.Options{
		Release:    "store-web",
		Generation: 1,
		Images:     []record.Image{{Name: "web", Ref: ref}},
		Assets:     assets.Options{Dir: dir},
		CDN:        []string{"https://cdn.example/store/"},
		Now:        func() time.Time { return time.Date(2021, 4, 5, 12, 0, 0, 0, time.UTC) },
		Getenv:     func(string) string { return "" },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, im := range m.Images {
		fmt.Println(im.Name, im.Tag, im.Digest, im.Platforms[0])
	}
	for _, f := range m.Assets.Files {
		fmt.Println(f.Path, f.Size, f.ContentType)
	}
	fmt.Println("fingerprint", m.Assets.Fingerprint)
	// Output:
	// web v1 sha256:82ee8731b8df2b6e722fa5daff7fd1a5aed718cb9f66ce08b121e17d830baea7 linux/amd64
	// app-1a2b.js 17 text/javascript; charset=utf-8
	// index.html 15 text/html; charset=utf-8
	// fingerprint sha256:abdd0f20e1080cf68104142abcef791de14008bf4c41bfada64f531dd06e2c41
}
