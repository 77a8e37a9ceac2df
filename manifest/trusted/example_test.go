package trusted_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
)

// A consumer fetches (through Source, for the MaxAge fallback), checks
// against its trusted state, runs its other checks, and accepts; a lower
// generation later is refused as a rollback. admission.Check runs this
// flow when given the State as its Guard.
func ExampleSource() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "lockstep-example-")
	defer os.RemoveAll(dir)
	st, _ := filestore.New(dir + "/store")
	state, _ := trusted.Open(dir + "/state")
	g7, _ := storetest.NewManifest("web", 7, "")
	store.Publish(ctx, st, g7, "production", "ci")

	src := &trusted.Source{Upstream: store.ChannelSource{Store: st, Release: "web"}, State: state, Release: "web"}
	m, err := src.Fetch(ctx)
	fmt.Println(m.Manifest.ID(), err, state.Check(ctx, m))
	// ... the admission checks pass ...
	fmt.Println(state.Accept(ctx, m))

	g6, _ := storetest.NewManifest("web", 6, "")
	var re *trusted.RefusalError
	fmt.Println(errors.As(state.Check(ctx, g6), &re), re.Kind)
	// Output:
	// web@7 <nil> <nil>
	// <nil>
	// true manifest-rollback
}
