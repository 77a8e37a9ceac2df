package assets

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// webFixture is a real framework build under testdata/web
// (scripts/build-web-fixtures.sh): its dist/, the asset lists in it and
// the public path those lists carry.
type webFixture struct {
	name, publicPath string
	lists            []string
	// unlisted are the files of dist/ that no list names (Vite's public/
	// files and index.html; the worker, which Vite 6 leaves out of its
	// manifest).
	unlisted []string
	// mustHave are patterns that some file of dist/ must match: what the
	// app was built to exercise, so a rebuild that lost it is caught.
	mustHave []string
	// mustSay are texts that a file of dist/ (by its path) must contain:
	// the CDN prefix the build was configured with, the islands, the
	// service worker's list, where a file name alone does not show them.
	mustSay [][2]string
}

// webFixtures are every build under testdata/web. Next.js, Angular, Astro,
// SvelteKit and React Router write no list that ParseList reads: record
// walks their dist/.
var webFixtures = []webFixture{
	{"vite-react", "", []string{".vite/manifest.json"}, []string{"assets/worker-DSJ1NDtR.js", "favicon.svg", "index.html", "robots.txt"}, []string{
		`^assets/index-[A-Za-z0-9_-]{8}\.js$`, `^assets/Report-[A-Za-z0-9_-]{8}\.js$`, `^assets/Report-[A-Za-z0-9_-]{8}\.css$`,
		`^assets/worker-[A-Za-z0-9_-]{8}\.js$`, `^assets/index-legacy-[A-Za-z0-9_-]{8}\.js$`, `^assets/polyfills-legacy-[A-Za-z0-9_-]{8}\.js$`,
		`^assets/fixture-[A-Za-z0-9_-]{8}\.woff2$`, `^assets/tile-[A-Za-z0-9_-]{8}\.png$`, `^robots\.txt$`, `^favicon\.svg$`, `^index\.html$`,
	}, nil},
	{"webpack", "/static/", []string{"asset-manifest.json", "assets-manifest.json"}, nil, []string{
		`^js/main\.[0-9a-f]{8}\.js$`, `^js/report\.[0-9a-f]{8}\.chunk\.js$`, `^js/[0-9]+\.[0-9a-f]{8}\.chunk\.js$`,
		`^css/main\.[0-9a-f]{8}\.css$`, `^css/report\.[0-9a-f]{8}\.chunk\.css$`, `^js/main\.[0-9a-f]{8}\.js\.map$`,
		`^media/fixture\.[0-9a-f]{8}\.woff2$`, `^media/tile\.[0-9a-f]{8}\.png$`, `^robots\.txt$`, `^favicon\.svg$`, `^index\.html$`,
	}, nil},
	{"nextjs", "", nil, nil, []string{
		`^index\.html$`, `^about\.html$`, `^docs\.html$`, `^docs/setup\.html$`, // app router and pages router
		`^index\.txt$`, `^about\.txt$`, `^about/__next\.about\.__PAGE__\.txt$`, `^__next\._tree\.txt$`, // RSC payloads
		`^_next/static/lockstep-fixture/_buildManifest\.js$`, `^_next/static/chunks/turbopack-[0-9a-z_-]+\.js$`,
		`^_next/static/chunks/[0-9a-z_-]+\.css$`, `^_next/static/media/fixture-[0-9a-z._-]+\.woff2$`,
		`^_next/static/media/tile\.[0-9a-z_-]+\.png$`, `^tile\.png$`, `^robots\.txt$`,
	}, [][2]string{
		{"index.html", `<script src="https://cdn.example.test/next/_next/static/chunks/`},
		{"index.html", `rel="preload" href="https://cdn.example.test/next/_next/static/media/fixture-`},
		{"index.html", `<img src="/tile.png"`},
		{"docs.html", `"assetPrefix":"https://cdn.example.test/next"`},
		{"_next/static/lockstep-fixture/_buildManifest.js", `"/docs/setup": [`},
	}},
	{"angular", "", nil, nil, []string{
		`^index\.html$`, `^main-[0-9A-Z]{8}\.js$`, `^chunk-[0-9A-Z]{8}\.js$`, `^styles-[0-9A-Z]{8}\.css$`,
		`^media/fixture-[0-9A-Z]{8}\.woff2$`, `^media/tile-[0-9A-Z]{8}\.png$`,
		`^ngsw\.json$`, `^ngsw-worker\.js$`, `^safety-worker\.js$`, `^manifest\.webmanifest$`, `^icons/icon-512x512\.png$`,
		`^favicon\.svg$`, `^robots\.txt$`,
	}, [][2]string{
		{"index.html", `<script src="https://cdn.example.test/ng/main-`},
		{"index.html", `<link rel="manifest" href="manifest.webmanifest">`},
		{"manifest.webmanifest", `"src": "icons/icon-512x512.png"`},
		{"ngsw.json", `"/media/fixture-`},
	}},
	{"astro", "", nil, nil, []string{
		`^index\.html$`, `^about/index\.html$`, `^_astro/Counter\.[A-Za-z0-9_-]{8}\.js$`, `^_astro/Chart\.[A-Za-z0-9_-]{8}\.js$`,
		`^_astro/client\.[A-Za-z0-9_-]{8}\.js$`, `^_astro/preact\.module\.[A-Za-z0-9_-]{8}\.js$`, `^_astro/[a-z]+\.[A-Za-z0-9_-]{8}\.css$`,
		`^_astro/fixture\.[A-Za-z0-9_-]{8}\.woff2$`, `^_astro/tile\.[A-Za-z0-9_-]{8}\.png$`, `^favicon\.svg$`, `^robots\.txt$`,
	}, [][2]string{
		{"index.html", `component-url="https://cdn.example.test/astro/_astro/Counter.`},
		{"index.html", `client="load"`},
		{"index.html", `client="idle"`},
		{"about/index.html", `client="visible"`},
		{"index.html", `<img src="https://cdn.example.test/astro/_astro/tile.`},
	}},
	{"sveltekit", "", nil, nil, []string{
		`^index\.html$`, `^about\.html$`, `^_app/immutable/entry/start\.[A-Za-z0-9_-]{8}\.js$`,
		`^_app/immutable/entry/app\.[A-Za-z0-9_-]{8}\.js$`, `^_app/immutable/nodes/3\.[A-Za-z0-9_-]{8}\.js$`,
		`^_app/immutable/assets/Chart\.[A-Za-z0-9_-]{8}\.css$`, `^_app/immutable/assets/fixture\.[A-Za-z0-9_-]{8}\.woff2$`,
		`^_app/immutable/assets/tile\.[A-Za-z0-9_-]{8}\.png$`, `^_app/version\.json$`, `^favicon\.svg$`, `^robots\.txt$`,
	}, [][2]string{
		{"about.html", `import("https://cdn.example.test/svelte/_app/immutable/entry/start.`},
		{"index.html", `<img src="https://cdn.example.test/svelte/_app/immutable/assets/tile.`},
		{"_app/version.json", `{"version":"lockstep-fixture"}`},
	}},
	{"react-router", "", nil, nil, []string{
		`^index\.html$`, `^assets/manifest-[0-9a-f]{8}\.js$`, `^assets/entry\.client-[A-Za-z0-9_-]{8}\.js$`,
		`^assets/root-[A-Za-z0-9_-]{8}\.js$`, `^assets/home-[A-Za-z0-9_-]{8}\.js$`, `^assets/about-[A-Za-z0-9_-]{8}\.js$`,
		`^assets/chart-[A-Za-z0-9_-]{8}\.js$`, `^assets/root-[A-Za-z0-9_-]{8}\.css$`,
		`^assets/fixture-[A-Za-z0-9_-]{8}\.woff2$`, `^assets/tile-[A-Za-z0-9_-]{8}\.png$`, `^favicon\.svg$`, `^robots\.txt$`,
	}, [][2]string{
		{"index.html", `import("https://cdn.example.test/rr/assets/entry.client-`},
		{"index.html", `"isSpaMode":true`},
	}},
}

// inlined are the data: URIs a build makes of a small font or image when
// its inline limit is not 0; every fixture is built so that none is, and
// the font and the images are files of their own.
var inlined = regexp.MustCompile(`data:(font/|image/png|application/(x-)?font-woff)`)

func webFixtureDir(name string) string {
	return filepath.Join("..", "..", "testdata", "web", name, "dist")
}

// TestWebFixturesComplete checks that every committed web fixture is whole:
// every file its asset lists name exists (Hash with the lists and no walk
// refuses a missing one), every file of dist/ is named by a list or is a
// public file, what the app exercises is there (its files, its CDN prefix,
// its islands and lists), and no font or image was inlined as a data: URI.
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
			for _, say := range fx.mustSay {
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(say[0])))
				if err != nil {
					t.Errorf("%s: %v", fx.name, err)
				} else if !strings.Contains(string(data), say[1]) {
					t.Errorf("%s: %s does not say %s", fx.name, say[0], say[1])
				}
			}
			for _, f := range all.Files {
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
				if err != nil {
					t.Fatal(err)
				}
				if m := inlined.Find(data); m != nil {
					t.Errorf("%s: %s inlines a file as %s...: the build's inline limit is not 0", fx.name, f.Path, m)
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

// TestWebFixturesListed: every fixture under testdata/web is in
// webFixtures, so a fixture added by scripts/build-web-fixtures.sh is
// checked by TestWebFixturesComplete.
func TestWebFixturesListed(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "..", "testdata", "web"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		if !slices.ContainsFunc(webFixtures, func(fx webFixture) bool {
			return fx.name == e.Name()
		}) {
			t.Errorf("testdata/web/%s is not in webFixtures", e.Name())
		}
	}
	if n != len(webFixtures) {
		t.Errorf("testdata/web has %d fixtures, webFixtures %d", n, len(webFixtures))
	}
}
