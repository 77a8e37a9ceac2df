package graph_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/assets/graph"
)

func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "graph")
	defer os.RemoveAll(dir)
	for name, text := range map[string]string{
		"index.html": `<script type="module" src="/app.js"></script><link rel="stylesheet" href="/app.css">`,
		"app.js":     `import("./lazy.js"); new Worker(new URL("./worker.js", import.meta.url))`,
		"app.css":    `@font-face { src: url(font.woff2) } body { background: url(data:image/png;base64,AAAA) }`,
		"lazy.js":    `export const x = 1`,
		"worker.js":  `self.onmessage = () => {}`,
		"font.woff2": "wOF2",
	} {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	hashed, _ := assets.Hash(context.Background(), assets.Options{Dir: dir})
	if _, err := graph.Build(context.Background(), hashed.Files, graph.Options{Dir: dir}); err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range hashed.Files {
		fmt.Println(f.Path, f.Loads)
	}
	// Output:
	// app.css [font.woff2]
	// app.js [lazy.js worker.js]
	// font.woff2 []
	// index.html [app.css app.js]
	// lazy.js []
	// worker.js []
}
