package assets

import (
	"slices"
	"testing"
)

func TestListEntries(t *testing.T) {
	tests := []struct {
		name, doc, format string
		want              []string
	}{
		{"vite: files, css and assets, relative to the build", `{
		  "index.html": {"file": "assets/index-B1.js", "isEntry": true, "imports": ["_shared-C2.js"], "css": ["assets/index-D3.css"], "assets": ["assets/logo-E4.svg"]},
		  "_shared-C2.js": {"file": "assets/shared-C2.js"}
		}`, FormatVite, []string{"assets/index-B1.js", "assets/index-D3.css", "assets/logo-E4.svg", "assets/shared-C2.js"}},
		{"webpack-manifest-plugin: absolute paths and URLs kept, queries cut", `{"main.js": "/static/main.1a.js?v=2", "vendor.js": "https://elsewhere.example/v.js", "a.png": " a.png "}`,
			FormatWebpackManifest, []string{"/static/main.1a.js", "a.png", "https://elsewhere.example/v.js"}},
		{"asset-manifest", `{"files": {"main.js": "/static/js/main.1a.js"}, "entrypoints": ["static/js/main.1a.js"]}`,
			FormatAssetManifest, []string{"/static/js/main.1a.js", "static/js/main.1a.js"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			format, entries, err := ListEntries([]byte(tt.doc))
			if err != nil {
				t.Fatalf("ListEntries = %v", err)
			}
			if format != tt.format || !slices.Equal(entries, tt.want) {
				t.Errorf("ListEntries = %s %q, want %s %q", format, entries, tt.format, tt.want)
			}
		})
	}
	// The shape checks are ParseList's.
	for _, doc := range []string{`["a.js"]`, `{}`, `{"a": 1}`, `{"a": {"file": "a.js", "imports": ["gone"]}}`, `{"a.js": ""}`} {
		if f, e, err := ListEntries([]byte(doc)); err == nil {
			t.Errorf("ListEntries(%s) = %s %q, want an error", doc, f, e)
		} else if _, perr := ParseList([]byte(doc), "", nil); perr == nil || err.Error() != perr.Error() {
			t.Errorf("ListEntries(%s) = %v; ParseList says %v", doc, err, perr)
		}
	}
}
