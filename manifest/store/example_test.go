package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// A delayed automation publishing an older plan over a newer one is
// refused, naming both generations.
func ExamplePublish() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "lockstep-example-")
	defer os.RemoveAll(dir)
	st, _ := filestore.New(dir)
	newer, _ := storetest.NewManifest("web", 7, "")
	older, _ := storetest.NewManifest("web", 6, "")

	p, err := store.Publish(ctx, st, newer, "production", "ci")
	fmt.Println(p.Channel, p.Generation, err)
	_, err = store.Publish(ctx, st, older, "production", "delayed automation")
	var ge *manifest.GenerationError
	fmt.Println(errors.As(err, &ge), ge.Have, ge.Offered)
	// Output:
	// production 7 <nil>
	// true 7 6
}
