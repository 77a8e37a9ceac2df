package scenario

import (
	"slices"
	"testing"
)

// TestClosureBuild: the build the closure benchmarks measure has the
// shape they print: one page per 500 assets (at least 2), every page's
// tree in the closure from every page, a tenth of the assets, the probed
// page's own tree a share of it, and a manifest that validates.
func TestClosureBuild(t *testing.T) {
	for _, n := range []int{100, 500, 10000} {
		b, err := NewClosureBuild(n, "https://cdn.example/app/", nil)
		if err != nil {
			t.Fatalf("NewClosureBuild(%d) = %v", n, err)
		}
		if want := max(2, n/500); b.Pages != want || b.All != n+want || len(b.Files) != b.All {
			t.Errorf("%d assets: %d pages, %d files (%d in Files), want %d pages", n, b.Pages, b.All, len(b.Files), want)
		}
		var seeds []string
		for _, p := range b.Manifest.Assets.Roots() {
			f, _ := b.Manifest.Assets.File(p)
			seeds = append(seeds, f.Loads...)
		}
		all := b.Manifest.Assets.Closure(seeds)
		if len(all) != b.Closure || b.Closure != b.Pages*(n/10/b.Pages) {
			t.Errorf("%d assets: the closure from every page has %d files, Closure says %d", n, len(all), b.Closure)
		}
		own := b.Manifest.Assets.Closure(b.Probed)
		if len(own) != b.Closure/b.Pages || !slices.Equal(b.Manifest.Assets.Closure(append(slices.Clone(own), all...)), all) {
			t.Errorf("%d assets: the probed page's own closure has %d files, want %d inside the whole", n, len(own), b.Closure/b.Pages)
		}
		if _, err := b.Manifest.Encode(); err != nil {
			t.Errorf("%d assets: the manifest does not encode: %v", n, err)
		}
	}
	if _, err := NewClosureBuild(7919, "https://cdn.example/", nil); err == nil {
		t.Error("a multiple of 7919 was accepted")
	}
}
