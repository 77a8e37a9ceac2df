package manifest

import (
	"slices"
	"strings"
	"testing"
)

func graphAssets() *Assets {
	f := func(p string, loads ...string) File { return File{Path: p, Loads: loads} }
	a := &Assets{Files: []File{
		f("assets/app.js", "assets/app.css", "assets/lazy.js", "assets/worker.js"),
		f("assets/app.css", "assets/font.woff2", "assets/logo.svg"),
		f("assets/font.woff2"),
		f("assets/lazy.js", "assets/app.js", "assets/lazy.css"), // a cycle back to app.js
		f("assets/lazy.css"),
		f("assets/logo.svg"),
		f("assets/other.js", "assets/other.css"),
		f("assets/other.css"),
		f("assets/worker.js"),
		f("index.html", "assets/app.css", "assets/app.js"),
		f("robots.txt"),
	}}
	slices.SortFunc(a.Files, func(x, y File) int { return strings.Compare(x.Path, y.Path) })
	return a
}

func TestClosure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		roots []string
		want  []string
	}{
		{"nothing", nil, nil},
		{"a leaf", []string{"robots.txt"}, []string{"robots.txt"}},
		{"through a cycle", []string{"index.html"}, []string{
			"assets/app.css", "assets/app.js", "assets/font.woff2", "assets/lazy.css", "assets/lazy.js",
			"assets/logo.svg", "assets/worker.js", "index.html"}},
		{"from the middle", []string{"assets/lazy.js"}, []string{
			"assets/app.css", "assets/app.js", "assets/font.woff2", "assets/lazy.css", "assets/lazy.js",
			"assets/logo.svg", "assets/worker.js"}},
		{"two roots, shared files once", []string{"assets/other.js", "assets/app.css", "assets/other.js"}, []string{
			"assets/app.css", "assets/font.woff2", "assets/logo.svg", "assets/other.css", "assets/other.js"}},
		{"a root outside the manifest is left out", []string{"gone.js", "assets/worker.js"}, []string{"assets/worker.js"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := graphAssets().Closure(tc.roots); !slices.Equal(got, tc.want) {
				t.Errorf("Closure(%q) =\n%q\nwant\n%q", tc.roots, got, tc.want)
			}
		})
	}
}

// TestClosureUnvalidated: a graph built in code and never validated, whose
// loads name a path outside the files, gives the files only.
func TestClosureUnvalidated(t *testing.T) {
	a := &Assets{Files: []File{{Path: "a.js", Loads: []string{"missing.js", "b.js"}}, {Path: "b.js"}}}
	if got, want := a.Closure([]string{"a.js"}), []string{"a.js", "b.js"}; !slices.Equal(got, want) {
		t.Errorf("Closure = %q, want %q", got, want)
	}
}

func TestVersion(t *testing.T) {
	m := testManifest()
	if got := m.Version(); got != APIVersion {
		t.Fatalf("Version of a manifest without a graph = %q, want %q", got, APIVersion)
	}
	m.Assets.Files[0].Loads = []string{m.Assets.Files[1].Path}
	if got := m.Version(); got != APIVersionV2 {
		t.Fatalf("Version with loads = %q, want %q", got, APIVersionV2)
	}
	if _, err := m.Encode(); err == nil {
		t.Fatal("Encode of a v1 manifest with loads succeeded, want a ValidationError")
	}
	back := roundTripAtVersion(t, m)
	if !slices.Equal(back.Assets.Files[0].Loads, m.Assets.Files[0].Loads) {
		t.Errorf("loads after a round trip = %q, want %q", back.Assets.Files[0].Loads, m.Assets.Files[0].Loads)
	}
	for v, mt := range map[string]string{APIVersion: MediaType, APIVersionV2: MediaTypeV2, APIVersionV3: MediaTypeV3, "lockstep.dev/v4": ""} {
		if got := MediaTypeOf(v); got != mt {
			t.Errorf("MediaTypeOf(%q) = %q, want %q", v, got, mt)
		}
	}
}

// roundTripAtVersion sets m's apiVersion to the one its fields need
// (Version), encodes it and parses it back, failing t on any error.
func roundTripAtVersion(t *testing.T, m *Manifest) *Manifest {
	t.Helper()
	m.APIVersion = m.Version()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
