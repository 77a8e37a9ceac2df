package assets

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// webFixtures are the real Vite and webpack builds under testdata/web
// (scripts/build-web-fixtures.sh): their dist/, the asset lists in it and
// the public path those lists carry.
var webFixtures = []struct {
	name, publicPath string
	lists            []string
	// unlisted are the files of dist/ that no list names (Vite's public/
	// files and index.html; the worker, which Vite 6 leaves out of its
	// manifest).
	unlisted []string
	// mustHave are patterns that some file of dist/ must match: what the
	// app was built to exercise, so a rebuild that lost it is caught.
	mustHave []string
}{
	{"vite-react", "", []string{".vite/manifest.json"}, []string{"assets/worker-DSJ1NDtR.js", "favicon.svg", "index.html", "robots.txt"}, []string{
		`^assets/index-[A-Za-z0-9_-]{8}\.js$`, `^assets/Report-[A-Za-z0-9_-]{8}\.js$`, `^assets/Report-[A-Za-z0-9_-]{8}\.css$`,
		`^assets/worker-[A-Za-z0-9_-]{8}\.js$`, `^assets/index-legacy-[A-Za-z0-9_-]{8}\.js$`, `^assets/polyfills-legacy-[A-Za-z0-9_-]{8}\.js$`,
		`^assets/fixture-[A-Za-z0-9_-]{8}\.woff2$`, `^assets/tile-[A-Za-z0-9_-]{8}\.png$`, `^robots\.txt$`, `^favicon\.svg$`, `^index\.html$`,
	}},
	{"webpack", "/static/", []string{"asset-manifest.json", "assets-manifest.json"}, nil, []string{
		`^js/main\.[0-9a-f]{8}\.js$`, `^js/report\.[0-9a-f]{8}\.chunk\.js$`, `^js/[0-9]+\.[0-9a-f]{8}\.chunk\.js$`,
		`^css/main\.[0-9a-f]{8}\.css$`, `^css/report\.[0-9a-f]{8}\.chunk\.css$`, `^js/main\.[0-9a-f]{8}\.js\.map$`,
		`^media/fixture\.[0-9a-f]{8}\.woff2$`, `^media/tile\.[0-9a-f]{8}\.png$`, `^robots\.txt$`, `^favicon\.svg$`, `^index\.html$`,
	}},
}

func webFixtureDir(name string) string {
	return filepath.Join("..", "..", "testdata", "web", name, "dist")
}

// TestWebFixturesComplete checks that every committed web fixture is whole:
// every file its asset lists name exists (Hash with the lists and no walk
// refuses a missing one), every file of dist/ is named by a list or is a
// public file, and what the app exercises is there.
func TestWebFixturesComplete(t *testing.T) {
	for _, fx := range webFixtures {
		t.Run(fx.name, func(t *testing.T) {
			dir := webFixtureDir(fx.name)
			var lists []string
			for _, l := range fx.lists {
				data, err := os.ReadFile(filepath.Join(dir, l))
				if err != nil {
					t.Fatal(err)
				}
				parsed, err := ParseList(data, fx.publicPath, nil)
				if err != nil {
					t.Fatalf("ParseList(%s): %v", l, err)
				}
				if len(parsed.Paths) == 0 {
					t.Fatalf("%s names no files", l)
				}
				lists = append(lists, filepath.Join(dir, l))
			}
			res, err := Hash(context.Background(), Options{Dir: dir, Lists: lists, PublicPath: fx.publicPath, Unlisted: UnlistedRecord})
			if err != nil {
				t.Fatalf("Hash(%s with its lists): %v", fx.name, err)
			}
			all, err := Hash(context.Background(), Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Unlisted, fx.unlisted) {
				t.Errorf("%s: files no list names = %q, want %q", fx.name, res.Unlisted, fx.unlisted)
			}
			recorded := map[string]bool{}
			for _, f := range res.Files {
				recorded[f.Path] = true
			}
			for _, f := range all.Files {
				if !recorded[f.Path] && !slices.Contains(fx.lists, f.Path) {
					t.Errorf("%s: %s is in dist/ but not recorded from the lists", fx.name, f.Path)
				}
			}
			for _, pat := range fx.mustHave {
				re := regexp.MustCompile(pat)
				found := false
				for _, f := range all.Files {
					found = found || re.MatchString(f.Path)
				}
				if !found {
					t.Errorf("%s: no file matches %s", fx.name, pat)
				}
			}
		})
	}
}
