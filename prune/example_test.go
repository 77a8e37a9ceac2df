package prune_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/prune"
)

// A release of three generations, production at the newest: with Keep 1
// the assets of generations 1 and 2 may go (a dry run says which).
func ExampleRun() {
	ctx := context.Background()
	storeDir, _ := os.MkdirTemp("", "store")
	originDir, _ := os.MkdirTemp("", "origin")
	defer os.RemoveAll(storeDir)
	defer os.RemoveAll(originDir)
	st, err := filestore.New(storeDir)
	if err != nil {
		log.Fatal(err)
	}
	for g := int64(1); g <= 3; g++ {
		m, err := storetest.NewManifest("web", g, "")
		if err != nil {
			log.Fatal(err)
		}
		for _, f := range m.Manifest.Assets.Files { // the pipeline's upload
			p := filepath.Join(originDir, filepath.FromSlash(f.Path))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, make([]byte, f.Size), 0o644)
		}
		if _, err := store.Publish(ctx, st, m, "production", "ci"); err != nil {
			log.Fatal(err)
		}
	}
	rep, err := prune.Run(ctx, st, "web", prune.Dir(originDir), prune.Options{GCOptions: store.GCOptions{Keep: 1}})
	if err != nil {
		log.Fatal(err)
	}
	sort.Slice(rep.Deleted, func(i, j int) bool { return rep.Deleted[i].Generations[0] < rep.Deleted[j].Generations[0] })
	for _, e := range rep.Deleted {
		fmt.Println("would delete the asset of generation", e.Generations)
	}
	for _, e := range rep.Kept {
		fmt.Println("kept the asset of generation", e.Generations, "because", e.Reason)
	}
	// Output:
	// would delete the asset of generation [1]
	// would delete the asset of generation [2]
	// kept the asset of generation [3] because a kept generation lists it
}
