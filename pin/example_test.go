package pin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/pin"
)

// Pin the image a docker-compose file names and rewrite the file to use
// its digest: what `lockstep pin --write compose.yaml` does.
func ExampleRun() {
	reg := memregistry.Start()
	defer reg.Close()
	img, _ := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64"})
	tag, _ := name.NewTag(reg.Ref("store/web:v1"))
	if err := remote.Write(tag, img); err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "pin")
	defer os.RemoveAll(dir)
	compose := filepath.Join(dir, "compose.yaml")
	os.WriteFile(compose, []byte("services:\n  web:\n    image: "+reg.Ref("store/web:v1")+"\n"), 0o644)

	report, err := pin.Run(context.Background(), pin.Options{Write: []string{compose}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var out strings.Builder
	if err := report.Write(&out, "text"); err != nil {
		fmt.Println(err)
	}
	b, _ := os.ReadFile(compose)
	fmt.Print(strings.ReplaceAll(out.String()+string(b), reg.Host, "REGISTRY"))
	// Output:
	// REGISTRY/store/web:v1@sha256:82ee8731b8df2b6e722fa5daff7fd1a5aed718cb9f66ce08b121e17d830baea7
	// services:
	//   web:
	//     image: REGISTRY/store/web:v1@sha256:82ee8731b8df2b6e722fa5daff7fd1a5aed718cb9f66ce08b121e17d830baea7
}
