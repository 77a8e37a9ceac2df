package graph

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// buildEntries hashes files (less those exclude matches) and builds their
// graph with opts (Dir and Excluded set here; Lists relative to Dir),
// returning the files, the result and the error.
func buildEntries(t *testing.T, files map[string]string, opts Options, exclude ...string) ([]manifest.File, *Result, error) {
	t.Helper()
	dir := t.TempDir()
	if err := scenario.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	h, err := assets.Hash(context.Background(), assets.Options{Dir: dir, Exclude: exclude})
	if err != nil {
		t.Fatal(err)
	}
	opts.Dir = dir
	opts.Excluded = h.Excluded
	for i, l := range opts.Lists {
		opts.Lists[i] = filepath.Join(dir, l)
	}
	res, err := Build(context.Background(), h.Files, opts)
	return h.Files, res, err
}

// TestEntries: the files a bundler's list names as entry points are roots
// (File.Entry), with the list that makes each one; what they load is
// reached. No page names them: a server renders their tags.
func TestEntries(t *testing.T) {
	cdn := []string{"https://cdn.example/app/"}
	tests := []struct {
		name    string
		files   map[string]string
		opts    Options
		exclude []string // left out of the release (--exclude)
		entries []string // "path<list"
		unread  []string
		// unreached is what no root reaches.
		unreached []string
	}{
		{name: "vite backend integration (.vite/manifest.json in the build)",
			files: map[string]string{
				".vite/manifest.json": `{"src/shop.ts": {"file": "assets/shop-B2.js", "isEntry": true, "css": ["assets/shop-C3.css"], "dynamicImports": ["src/cart.ts"]},
				  "src/cart.ts": {"file": "assets/cart-D4.js", "isDynamicEntry": true, "assets": ["assets/cart-E5.png"]}}`,
				"assets/shop-B2.js":  `console.log("shop")`, // the lazy import is only in the list
				"assets/shop-C3.css": `body{}`,
				"assets/cart-D4.js":  `export default 1`,
				"assets/cart-E5.png": "PNG",
				"assets/stray-F6.js": `export {}`,
			},
			entries:   []string{"assets/shop-B2.js<.vite/manifest.json", "assets/shop-C3.css<.vite/manifest.json"},
			unreached: []string{".vite/manifest.json", "assets/stray-F6.js"}},
		{name: "vite, the list given (--asset-list)",
			files: map[string]string{
				".vite/manifest.json": `{"src/a.ts": {"file": "assets/a-1.js", "isEntry": true}}`,
				"assets/a-1.js":       `export {}`,
			},
			opts:      Options{Lists: []string{".vite/manifest.json"}},
			entries:   []string{"assets/a-1.js<LIST"},
			unreached: []string{".vite/manifest.json"}},
		{name: "create-react-app asset-manifest.json and webpack-assets-manifest, with a public path",
			files: map[string]string{
				"asset-manifest.json":  `{"files": {"main.js": "/static/js/main.1a.js", "main.css": "/static/css/main.2b.css"}, "entrypoints": ["js/main.1a.js", "css/main.2b.css"]}`,
				"assets-manifest.json": `{"main.js": {"src": "js/main.1a.js"}, "entrypoints": {"main": {"assets": {"js": [{"src": "js/main.1a.js", "integrity": "sha256-x"}]}}}}`,
				"js/main.1a.js":        `__webpack_require__.p + "js/" + {1: "lazy"}[id] + ".9c.chunk.js"; "js/lazy.9c.chunk.js"`,
				"js/lazy.9c.chunk.js":  `export {}`,
				"css/main.2b.css":      `body{}`,
			},
			opts: Options{PublicPath: "/static/"},
			entries: []string{"css/main.2b.css<asset-manifest.json", "js/main.1a.js<asset-manifest.json",
				"js/main.1a.js<assets-manifest.json"},
			unreached: []string{"asset-manifest.json", "assets-manifest.json"}},
		{name: "assets-webpack-plugin's named chunks",
			files: map[string]string{
				"webpack-assets.json": `{"admin": {"js": "/admin.1.js"}, "": {"png": ["/logo.png"]}}`,
				"admin.1.js":          `export {}`,
				"logo.png":            "PNG",
			},
			entries:   []string{"admin.1.js<webpack-assets.json"},
			unreached: []string{"logo.png", "webpack-assets.json"}},
		{name: "Next.js build-manifest.json, relative to its folder",
			files: map[string]string{
				"next/build-manifest.json":            `{"pages": {"/_app": ["static/chunks/app-1.js"], "/docs": ["static/chunks/docs-2.js"]}, "polyfillFiles": ["static/chunks/poly-3.js"], "rootMainFiles": [], "lowPriorityFiles": []}`,
				"next/static/chunks/app-1.js":         `1`,
				"next/static/chunks/docs-2.js":        `2`,
				"next/static/chunks/poly-3.js":        `3`,
				"next/static/BUILD/_buildManifest.js": `self.__BUILD_MANIFEST={"/docs":["static/chunks/docs-2.js"]}`,
			},
			entries: []string{"next/static/BUILD/_buildManifest.js<next/static/BUILD/_buildManifest.js",
				"next/static/chunks/app-1.js<next/build-manifest.json", "next/static/chunks/docs-2.js<next/build-manifest.json",
				"next/static/chunks/poly-3.js<next/build-manifest.json"},
			unreached: []string{"next/build-manifest.json"}},
		{name: "an entry a page names is reached from the page, not marked",
			files: map[string]string{
				".vite/manifest.json": `{"index.html": {"file": "assets/index-1.js", "isEntry": true}, "src/admin.ts": {"file": "assets/admin-2.js", "isEntry": true}}`,
				"index.html":          `<script type=module src="/assets/index-1.js"></script>`,
				"assets/index-1.js":   `export {}`,
				"assets/admin-2.js":   `export {}`,
			},
			entries:   []string{"assets/admin-2.js<.vite/manifest.json", "assets/index-1.js<.vite/manifest.json(page)"},
			unreached: []string{".vite/manifest.json"}},
		{name: "the list excluded from the release (it is not for the CDN) is read all the same",
			files: map[string]string{
				".vite/manifest.json": `{"src/a.ts": {"file": "assets/a-1.js", "isEntry": true}}`,
				"assets/a-1.js":       `export {}`,
			},
			exclude:   []string{".vite"},
			entries:   []string{"assets/a-1.js<.vite/manifest.json"},
			unreached: nil},
		{name: "a web app manifest named manifest.json is no list",
			files: map[string]string{
				"manifest.json": `{"name": "x", "start_url": "/", "icons": [{"src": "icon.png"}]}`,
				"icon.png":      "PNG",
			},
			unreached: []string{"icon.png", "manifest.json"}},
		{name: "a flat webpack manifest.json names no entry",
			files: map[string]string{
				"manifest.json": `{"main.js": "main.1.js"}`,
				"main.1.js":     `1`,
			},
			unreached: []string{"main.1.js", "manifest.json"}},
		{name: "a file named like Vite's list that is none is reported",
			files: map[string]string{
				".vite/manifest.json": `{"hello": "world", "n": 1}`,
			},
			unread:    []string{".vite/manifest.json"},
			unreached: []string{".vite/manifest.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.CDN = cdn
			opts.Lists = slices.Clone(opts.Lists)
			files, res, err := buildEntries(t, tt.files, opts, tt.exclude...)
			if err != nil {
				t.Fatalf("Build = %v", err)
			}
			var got []string
			for _, e := range res.Entries {
				list := e.List
				if len(opts.Lists) > 0 && list == opts.Lists[0] {
					list = "LIST"
				}
				if e.PageReached {
					list += "(page)"
				}
				got = append(got, e.Path+"<"+list)
			}
			if !slices.Equal(got, tt.entries) {
				t.Errorf("Entries = %q, want %q", got, tt.entries)
			}
			var marked []string
			for _, f := range files {
				if f.Entry {
					marked = append(marked, f.Path)
				}
				if f.Entry && !slices.Contains(res.Roots, f.Path) {
					t.Errorf("entry %s is not a root (%q)", f.Path, res.Roots)
				}
			}
			var want []string
			for _, e := range tt.entries {
				if p, _, _ := strings.Cut(e, "<"); !strings.HasSuffix(e, "(page)") {
					want = append(want, p)
				}
			}
			if want = slices.Compact(want); !slices.Equal(marked, want) {
				t.Errorf("files marked Entry = %q, want %q", marked, want)
			}
			var unread []string
			for _, u := range res.Unread {
				unread = append(unread, u.Path)
			}
			if !slices.Equal(unread, tt.unread) {
				t.Errorf("Unread = %v, want %q", res.Unread, tt.unread)
			}
			if !slices.Equal(res.Unreached, tt.unreached) {
				t.Errorf("Unreached = %q, want %q", res.Unreached, tt.unreached)
			}
		})
	}
}

// TestEntriesRefused: a list that names an entry the release does not
// hold, a path outside the asset directory or a URL under none of the
// CDN bases refuses the build: a server rendering its tags sends browsers
// where nothing is checked. Nothing is fetched (no server runs here).
func TestEntriesRefused(t *testing.T) {
	tests := []struct {
		name, list, body string
		lists            bool // given as Options.Lists
		want             string
		publicPath       string
	}{
		{name: "an entry the release does not hold", list: ".vite/manifest.json",
			body: `{"src/a.ts": {"file": "assets/a-OTHER.js", "isEntry": true}}`, want: `"assets/a-OTHER.js", which is not a file of the release`},
		{name: "an entry under a folder the release does not have", list: "asset-manifest.json",
			body: `{"files": {}, "entrypoints": ["static/js/a-1.js"]}`, want: "not a file of the release", publicPath: "/static/"},
		{name: "an entry on another host", list: "asset-manifest.json",
			body: `{"files": {}, "entrypoints": ["https://evil.example/a-1.js"]}`, want: "none of the CDN bases"},
		{name: "a protocol-relative entry on another host", list: "assets-manifest.json",
			body: `{"entrypoints": {"main": {"assets": {"js": ["//evil.example/a-1.js"]}}}}`, want: "none of the CDN bases"},
		{name: "an entry outside the asset directory", list: "asset-manifest.json",
			body: `{"files": {}, "entrypoints": ["../../etc/passwd"]}`, want: "outside the asset directory"},
		{name: "an entry outside the asset directory, Next.js", list: "build-manifest.json",
			body: `{"pages": {"/": ["../../../etc/passwd"]}}`, want: "outside the asset directory"},
		{name: "a given list's entry the release does not hold", list: "list/.vite/manifest.json", lists: true,
			body: `{"src/a.ts": {"file": "assets/a-1.js", "isEntry": true}, "src/b.ts": {"file": "assets/b-GONE.js", "isEntry": true}}`, want: "not a file of the release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{tt.list: tt.body, "assets/a-1.js": "export {}", "js/a-1.js": "1"}
			opts := Options{CDN: []string{"https://cdn.example/app/"}}
			if tt.lists {
				opts.Lists = []string{tt.list}
			}
			_, res, err := buildEntries(t, files, opts)
			var ae *assets.Error
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(ae.Path, tt.list) {
				t.Fatalf("Build = %v, %v; want an *assets.Error on %s containing %q", res, err, tt.list, tt.want)
			}
			if tt.publicPath != "" && ae.PublicPath != tt.publicPath {
				t.Errorf("PublicPath hint = %q, want %q", ae.PublicPath, tt.publicPath)
			}
		})
	}
}

// TestFixtureEntries: the real Vite and webpack builds deployed as a
// server's backend integration (no HTML shipped: the server renders the
// tags from the bundler's list, found in the build by its name). Without
// the entries no root would reach a script; with them every script and
// stylesheet is reached, and each entry says its list.
func TestFixtureEntries(t *testing.T) {
	want := map[string][]string{
		"vite-react": {
			"assets/index-B4TPZJfM.js<.vite/manifest.json", "assets/index-Cu73fR1L.css<.vite/manifest.json",
			"assets/index-legacy-BJUse8hi.js<.vite/manifest.json", "assets/polyfills-legacy-CLIumKav.js<.vite/manifest.json",
		},
		"webpack": {
			"css/main.492c1cad.css<asset-manifest.json", "css/main.492c1cad.css<assets-manifest.json",
			"js/main.8fce7357.js<asset-manifest.json", "js/main.8fce7357.js<assets-manifest.json",
		},
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			dir := fixtureDir(fx.name)
			h, err := assets.Hash(context.Background(), assets.Options{Dir: dir, PublicPath: fx.publicPath, Exclude: []string{"*.html"}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Build(context.Background(), h.Files, Options{Dir: dir, PublicPath: fx.publicPath, CDN: []string{"https://cdn.example/app/"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range res.Entries {
				got = append(got, e.Path+"<"+e.List)
			}
			if !slices.Equal(got, want[fx.name]) {
				t.Errorf("Entries = %q, want %q", got, want[fx.name])
			}
			for _, p := range res.Unreached {
				if ext := filepath.Ext(p); ext == ".js" || ext == ".css" || ext == ".woff2" || ext == ".png" {
					t.Errorf("%s is unreached with the entries as roots (unreached: %q)", p, res.Unreached)
				}
			}
		})
	}
}
