package assets

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	cdn := []string{"https://cdn.example/store/"}
	tests := []struct {
		name, doc, publicPath, format string
		want, entries                 []string
	}{
		{"vite", `{
		  "index.html": {"file": "assets/index-B1.js", "src": "index.html", "isEntry": true,
		    "imports": ["_shared-C2.js"], "dynamicImports": ["lazy.ts"], "css": ["assets/index-D3.css"], "assets": ["assets/logo-E4.svg"]},
		  "_shared-C2.js": {"file": "assets/shared-C2.js", "name": "shared"},
		  "lazy.ts": {"file": "assets/lazy-F5.js", "src": "lazy.ts", "isDynamicEntry": true, "css": ["assets/index-D3.css"]}
		}`, "", FormatVite, []string{"assets/index-B1.js", "assets/index-D3.css", "assets/lazy-F5.js", "assets/logo-E4.svg", "assets/shared-C2.js"},
			[]string{"assets/index-B1.js", "assets/index-D3.css"}},
		{"vite backend entries", `{
		  "src/admin.ts": {"file": "assets/admin-A1.js", "src": "src/admin.ts", "isEntry": true},
		  "src/shop.ts": {"file": "assets/shop-B2.js", "src": "src/shop.ts", "isEntry": true, "css": ["assets/shop-C3.css"], "dynamicImports": ["src/cart.ts"]},
		  "src/cart.ts": {"file": "assets/cart-D4.js", "src": "src/cart.ts", "isDynamicEntry": true}
		}`, "", FormatVite, []string{"assets/admin-A1.js", "assets/cart-D4.js", "assets/shop-B2.js", "assets/shop-C3.css"},
			[]string{"assets/admin-A1.js", "assets/shop-B2.js", "assets/shop-C3.css"}},
		{"webpack-manifest-plugin", `{"main.js": "/static/main.1a.js", "main.css": "/static/main.2b.css", "logo.png": "/static/logo.3c.png"}`,
			"/static/", FormatWebpackManifest, []string{"logo.3c.png", "main.1a.js", "main.2b.css"}, nil},
		{"webpack-assets-manifest with integrity and entrypoints", `{
		  "main.js": {"src": "main.1a.js", "integrity": "sha256-abc"},
		  "entrypoints": {"main": {"assets": {"js": [{"src": "vendor.9z.js", "integrity": "sha256-def"}], "css": ["main.2b.css"]}}}
		}`, "", FormatWebpackManifest, []string{"main.1a.js", "main.2b.css", "vendor.9z.js"}, []string{"main.2b.css", "vendor.9z.js"}},
		{"create-react-app asset-manifest", `{"files": {"main.js": "/static/js/main.1a.js", "index.html": "/index.html",
		  "main.js.map": "/static/js/main.1a.js.map"}, "entrypoints": ["static/js/main.1a.js", "static/css/main.2b.css"]}`,
			"", FormatAssetManifest, []string{"index.html", "static/css/main.2b.css", "static/js/main.1a.js", "static/js/main.1a.js.map"},
			[]string{"static/css/main.2b.css", "static/js/main.1a.js"}},
		{"assets-webpack-plugin", `{"main": {"js": "/main.1a.js", "css": ["/main.2b.css", "/extra.css"]}, "": {"png": ["/logo.png"]},
		  "metadata": {"version": 3}}`, "", FormatAssetsPlugin, []string{"extra.css", "logo.png", "main.1a.js", "main.2b.css"},
			[]string{"extra.css", "main.1a.js", "main.2b.css"}},
		{"absolute URLs under the CDN, queries", `{"a.js": "https://cdn.example/store/a.1.js?v=1", "b.js": "//cdn.example/store/b.2.js#x"}`,
			"", FormatWebpackManifest, []string{"a.1.js", "b.2.js"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseList([]byte(tt.doc), tt.publicPath, cdn)
			if err != nil {
				t.Fatalf("ParseList = %v", err)
			}
			if l.Format != tt.format || !reflect.DeepEqual(l.Paths, tt.want) {
				t.Errorf("ParseList = %s %q, want %s %q", l.Format, l.Paths, tt.format, tt.want)
			}
			if !reflect.DeepEqual(l.Entries, tt.entries) {
				t.Errorf("ParseList entries = %q, want %q", l.Entries, tt.entries)
			}
		})
	}
}

func TestParseListRefuses(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"not an object", `["a.js"]`, "JSON object"},
		{"empty", `{}`, "empty"},
		{"unknown shape", `{"a": 1}`, "not a Vite manifest"},
		{"vite import of a missing chunk", `{"a": {"file": "a.js", "imports": ["gone"]}}`, `imports "gone"`},
		{"URL under no CDN base", `{"a.js": "https://elsewhere.example/a.js"}`, "none of the CDN bases"},
		{"empty entry", `{"a.js": ""}`, "empty entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseList([]byte(tt.doc), "", []string{"https://cdn.example/"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseList(%s) = %v, %v; want an error containing %q", tt.doc, l, err, tt.want)
			}
		})
	}
}

func TestHashList(t *testing.T) {
	dir := tree(t, map[string]string{
		".vite/manifest.json": `{"index.html": {"file": "assets/index-B1.js", "css": ["assets/index-D3.css"]}}`,
		"assets/index-B1.js":  "js", "assets/index-D3.css": "css", "robots.txt": "r",
	})
	list := filepath.Join(dir, ".vite", "manifest.json")
	// Vite copied public/robots.txt into the build, and the list does not
	// name it: the CDN serves it all the same, so it is recorded (and
	// named), never dropped; the list itself is not an asset.
	r, err := Hash(context.Background(), Options{Dir: dir, Lists: []string{list}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(r), []string{"assets/index-B1.js", "assets/index-D3.css", "robots.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Hash(list) paths = %q, want %q", got, want)
	}
	if !reflect.DeepEqual(r.Unlisted, []string{"robots.txt"}) {
		t.Errorf("Hash(list) Unlisted = %q, want [robots.txt]", r.Unlisted)
	}
	// Refused, by name, when asked.
	_, err = Hash(context.Background(), Options{Dir: dir, Lists: []string{list}, Unlisted: UnlistedRefuse})
	var ae *Error
	if !errors.As(err, &ae) || ae.Path != "robots.txt" || !strings.Contains(err.Error(), "robots.txt") || !strings.Contains(err.Error(), "1 files") {
		t.Errorf("Hash(list, refuse) = %v, want an *Error naming robots.txt", err)
	}
	// ... unless excluded on purpose.
	r, err = Hash(context.Background(), Options{Dir: dir, Lists: []string{list}, Unlisted: UnlistedRefuse, Exclude: []string{"robots.txt"}})
	if err != nil || len(r.Unlisted) != 0 || len(r.Files) != 2 {
		t.Errorf("Hash(list, refuse, exclude robots.txt) = %v, %v; want the two listed files", r, err)
	}
	r, err = Hash(context.Background(), Options{Dir: dir, Lists: []string{list}, Walk: true, Exclude: []string{".vite"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(r), []string{"assets/index-B1.js", "assets/index-D3.css", "robots.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Hash(list + walk) paths = %q, want %q", got, want)
	}
}

func TestHashListRefuses(t *testing.T) {
	outside := tree(t, map[string]string{"secret.js": "s"})
	tests := []struct {
		name, list, path string
		setup            func(t *testing.T, dir string)
		is               error
	}{
		{"a listed file is missing", `{"a.js": "gone.js"}`, "gone.js", nil, fs.ErrNotExist},
		{"a listed path escapes", `{"a.js": "../secret.js"}`, "../secret.js", nil, nil},
		{"a listed file is a symlink outside", `{"a.js": "link.js"}`, "link.js", func(t *testing.T, dir string) {
			must(t, os.Symlink(filepath.Join(outside, "secret.js"), filepath.Join(dir, "link.js")))
		}, nil},
		{"a listed path goes through a directory symlink outside", `{"a.js": "out/secret.js"}`, "out/secret.js", func(t *testing.T, dir string) {
			must(t, os.Symlink(outside, filepath.Join(dir, "out")))
		}, nil},
		{"a listed path is a directory", `{"a.js": "sub"}`, "sub", func(t *testing.T, dir string) {
			must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"ok.js": "ok"})
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			list := filepath.Join(t.TempDir(), "manifest.json")
			must(t, os.WriteFile(list, []byte(tt.list), 0o644))
			_, err := Hash(context.Background(), Options{Dir: dir, Lists: []string{list}})
			var ae *Error
			if !errors.As(err, &ae) || ae.Path != tt.path {
				t.Fatalf("Hash = %v, want an *Error naming %q", err, tt.path)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Hash = %v, want it to wrap %v", err, tt.is)
			}
		})
	}
}

// TestParseListLoads: a Vite manifest says what each chunk's file loads
// (its imports' and dynamic imports' files, its css and assets); webpack's
// lists say no such thing.
func TestParseListLoads(t *testing.T) {
	vite := `{
	  "index.html": {"file": "assets/index-B1.js", "isEntry": true, "imports": ["_shared-C2.js"], "dynamicImports": ["lazy.ts"],
	    "css": ["assets/index-D3.css"], "assets": ["assets/logo-E4.svg"]},
	  "_shared-C2.js": {"file": "assets/shared-C2.js"},
	  "lazy.ts": {"file": "assets/lazy-F5.js", "imports": ["index.html", "_shared-C2.js"], "css": ["assets/index-D3.css"]}
	}`
	l, err := ParseList([]byte(vite), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"assets/index-B1.js": {"assets/index-D3.css", "assets/lazy-F5.js", "assets/logo-E4.svg", "assets/shared-C2.js"},
		"assets/lazy-F5.js":  {"assets/index-B1.js", "assets/index-D3.css", "assets/shared-C2.js"},
	}
	if !reflect.DeepEqual(l.Loads, want) {
		t.Errorf("Loads = %q, want %q", l.Loads, want)
	}
	w, err := ParseList([]byte(`{"main.js": "/static/main.1a.js", "entrypoints": {"main": {"assets": {"js": ["main.1a.js"]}}}}`), "/static/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Loads != nil {
		t.Errorf("webpack Loads = %q, want none", w.Loads)
	}
}

// TestHashListExclude: Exclude means what it says with asset lists too:
// webpack's lists name source maps and index.html, and an entry that
// matches, or lies in a directory that matches, is left out and counted,
// never recorded. No recorded file is called excluded.
func TestHashListExclude(t *testing.T) {
	dir := webFixtureDir("webpack")
	lists := []string{filepath.Join(dir, "asset-manifest.json"), filepath.Join(dir, "assets-manifest.json")}
	r, err := Hash(context.Background(), Options{Dir: dir, Lists: lists, PublicPath: "/static/", Exclude: []string{"*.map", "index.html"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"css/main.492c1cad.css.map", "css/report.1f3cab88.chunk.css.map", "index.html", "js/408.bdf92cd7.chunk.js.map",
		"js/main.8fce7357.js.map", "js/report.50729254.chunk.js.map"}
	if !reflect.DeepEqual(r.Excluded, want) {
		t.Errorf("Excluded = %q, want %q", r.Excluded, want)
	}
	for _, f := range r.Files {
		if strings.HasSuffix(f.Path, ".map") || f.Path == "index.html" || slices.Contains(r.Excluded, f.Path) {
			t.Errorf("%s was recorded and excluded", f.Path)
		}
	}
	// A directory pattern leaves out the entries inside it.
	r, err = Hash(context.Background(), Options{Dir: dir, Lists: lists, PublicPath: "/static/", Exclude: []string{"media"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Files {
		if strings.HasPrefix(f.Path, "media/") {
			t.Errorf("%s was recorded, its directory excluded", f.Path)
		}
	}
	if !slices.Contains(r.Excluded, "media") || !slices.Contains(r.Excluded, "media/tile.b6a08817.png") {
		t.Errorf("Excluded = %q, want media and the entries in it", r.Excluded)
	}
}

// TestHashListPublicPathHint: a list whose entries carry a public path the
// asset directory does not have is refused with the prefix it saw.
func TestHashListPublicPathHint(t *testing.T) {
	dir := webFixtureDir("webpack")
	_, err := Hash(context.Background(), Options{Dir: dir, Lists: []string{filepath.Join(dir, "asset-manifest.json")}})
	var ae *Error
	if !errors.As(err, &ae) || ae.PublicPath != "/static/" || !strings.Contains(err.Error(), `without the prefix "/static/"`) {
		t.Fatalf("Hash without the public path = %v, want an *Error suggesting /static/", err)
	}
	// A file that is missing under a prefix that exists gets no hint.
	tmp := tree(t, map[string]string{"static/other.js": "x"})
	list := filepath.Join(tmp, "list.json")
	must(t, os.WriteFile(list, []byte(`{"a.js": "/static/gone.js"}`), 0o644))
	_, err = Hash(context.Background(), Options{Dir: tmp, Lists: []string{list}})
	if !errors.As(err, &ae) || ae.PublicPath != "" {
		t.Errorf("Hash = %v, want an *Error with no public path hint", err)
	}
}
