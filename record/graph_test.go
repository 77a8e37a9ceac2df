package record

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/assets/graph"
)

// TestGraphReport: record says which files no page reaches and which it
// cannot read, on stderr (its logger) and in the graph report, and the
// manifest is written all the same.
func TestGraphReport(t *testing.T) {
	dir := t.TempDir()
	if err := scenario.WriteFiles(dir, map[string]string{
		"index.html":   `<script src="/js/app.js"></script>`,
		"js/app.js":    `import("./lazy.js")`,
		"js/lazy.js":   ``,
		"js/orphan.js": ``,
		"data.bin":     "\x00\x01",
		"broken.json":  `{"icons": [`,
	}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	out := t.TempDir()
	res, err := Record(context.Background(), Options{
		Release: "store-web", Generation: 1, CDN: []string{"https://cdn.example/"},
		Assets: assets.Options{Dir: dir}, Logger: slog.New(slog.NewTextHandler(&log, nil)),
	}, Output{Path: filepath.Join(out, "release.json"), GraphReport: filepath.Join(out, "graph.json")})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(res.GraphReport)
	if err != nil {
		t.Fatal(err)
	}
	var g graph.Result
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if want := []string{"broken.json", "data.bin", "js/orphan.js"}; !slices.Equal(g.Unreached, want) {
		t.Errorf("unreached = %q, want %q", g.Unreached, want)
	}
	var unread []string
	for _, u := range g.Unread {
		unread = append(unread, u.Path)
	}
	if want := []string{"broken.json", "data.bin"}; !slices.Equal(unread, want) {
		t.Errorf("unread = %v, want %q", g.Unread, want)
	}
	if !slices.Equal(g.Roots, []string{"index.html"}) || res.Graph == nil || len(res.Graph.Unread) != 2 {
		t.Errorf("roots = %q, Result.Graph = %+v", g.Roots, res.Graph)
	}
	for _, want := range []string{"js/orphan.js", "data.bin", "broken.json", "no root of the release"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not name %q:\n%s", want, log.String())
		}
	}
	if res.Path == "" {
		t.Error("no manifest written")
	}
}
