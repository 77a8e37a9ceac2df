package assets

import (
	"context"
	"slices"
	"testing"
)

func TestNameHash(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"assets/index-B4TPZJfM.js", "B4TPZJfM"},
		{"assets/Report--TfcrJ_6.js", "-TfcrJ_6"},
		{"assets/polyfills-legacy-CLIumKav.js", "CLIumKav"},
		{"js/main.8fce7357.js", "8fce7357"},
		{"js/report.50729254.chunk.js", "50729254"},
		{"js/main.8fce7357.js.map", "8fce7357"},
		{"static/js/main.1a2b3c4d5e6f7a8b9c0d.js", "1a2b3c4d5e6f7a8b9c0d"},
		{"chunk-a1b2c3d4e5f6.js", "a1b2c3d4e5f6"},
		{"index.3f2a1b9c.js", "3f2a1b9c"}, // Vite 2's [name].[hash]
		{"robots.txt", ""},
		{"favicon.svg", ""},
		{"index.html", ""},
		{"app-settings.js", ""},
		{"CHANGELOG.txt", ""},
		{"report-20261202.pdf", ""},
		{"report.20261202.pdf", "20261202"}, // the dotted hex form, all digits
		{"deadbeefcafe.js", ""},
		{"8fce7357", ""},   // no extension: not a bundler's name
		{"a.abc_1234", ""}, // only the extension
		{"logo.svg", ""},
	} {
		if got := NameHash(tc.path); got != tc.want {
			t.Errorf("NameHash(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestNameHashFixtures: on the real builds, the files a bundler named with
// a hash have one and the others do not.
func TestNameHashFixtures(t *testing.T) {
	unhashed := map[string][]string{
		"vite-react": {".vite/manifest.json", "favicon.svg", "index.html", "robots.txt"},
		"webpack":    {"asset-manifest.json", "assets-manifest.json", "favicon.svg", "index.html", "robots.txt"},
	}
	for _, fx := range webFixtures {
		res, err := Hash(context.Background(), Options{Dir: webFixtureDir(fx.name)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Files {
			if NameHash(f.Path) == "" {
				got = append(got, f.Path)
			}
		}
		if want := unhashed[fx.name]; !slices.Equal(got, want) {
			t.Errorf("%s: names without a hash = %q, want %q", fx.name, got, want)
		}
	}
}
