package cdn

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	assetfiles "github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/verdict"
)

// TestWebFixturesThroughNginx checks the real Vite and webpack builds
// (testdata/web) served by a real nginx, which states no checksum: the
// correct deployment passes, the files without a content hash in their
// name (robots.txt, favicon.svg, index.html) are compared by their bytes
// and the hashed ones by size, and a public file changed at the same size
// (which a header check cannot see) is refused with its finding.
func TestWebFixturesThroughNginx(t *testing.T) {
	for _, fx := range []struct {
		name, prefix string
		unhashed     []string
	}{
		{"vite-react", "", []string{"favicon.svg", "index.html", "robots.txt"}},
		{"webpack", "static/", []string{"asset-manifest.json", "assets-manifest.json", "favicon.svg", "index.html", "robots.txt"}},
	} {
		t.Run(fx.name, func(t *testing.T) {
			dist := filepath.Join("..", "..", "testdata", "web", fx.name, "dist")
			h, err := assetfiles.Hash(context.Background(), assetfiles.Options{Dir: dist, Exclude: []string{".vite"}})
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			served := filepath.Join(root, filepath.FromSlash(fx.prefix))
			if err := os.CopyFS(served, os.DirFS(dist)); err != nil {
				t.Fatal(err)
			}
			a := manifest.Assets{CDN: []string{testenv.Nginx(t, root) + "/" + fx.prefix}, Files: h.Files}
			rep, err := Check(context.Background(), a, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Err() != nil {
				t.Fatalf("the correct deployment: %v", rep.Err())
			}
			var byBytes []string
			for _, r := range rep.Results {
				if r.Compared == ComparedBytes {
					byBytes = append(byBytes, r.Path)
				} else if r.Compared != ComparedSize {
					t.Errorf("%s compared %q, want size (nginx states no checksum)", r.Path, r.Compared)
				}
			}
			if strings.Join(byBytes, " ") != strings.Join(fx.unhashed, " ") {
				t.Errorf("compared by bytes: %q, want %q", byBytes, fx.unhashed)
			}
			if rep.Summary.Bytes != len(fx.unhashed) || rep.Summary.SizeOnly != len(h.Files)-len(fx.unhashed) {
				t.Errorf("summary %+v, want %d by bytes and the rest by size", rep.Summary, len(fx.unhashed))
			}

			// A newer robots.txt of the same size on the CDN.
			robots := filepath.Join(served, "robots.txt")
			old, err := os.ReadFile(robots)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(robots, []byte(strings.ToUpper(string(old))), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err = Check(context.Background(), a, Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := byPath(rep)["robots.txt"]
			if r.Status != StatusWrongContent || !strings.Contains(r.Reason, "the bytes hash to") {
				t.Errorf("robots.txt changed at the same size: %s (%q), want wrong-content", r.Status, r.Reason)
			}
			if err := rep.Err(); !verdict.IsMismatch(err) || !strings.Contains(err.Error(), "robots.txt") {
				t.Errorf("Err() = %v, want a mismatch naming robots.txt", err)
			}
			if rep.Summary.Wrong != 1 {
				t.Errorf("summary %+v, want exactly robots.txt wrong", rep.Summary)
			}
		})
	}
}
