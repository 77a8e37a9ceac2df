package scenario

import (
	"fmt"
	"slices"

	"github.com/lockstep-dev/lockstep/manifest"
)

// ClosureBuild is the build whose boot gate admission.BenchmarkClosure and
// bench/closure.sh measure: n assets (Assets), a tenth of them loaded by
// the release's pages, the rest what no page loads (other builds' leftovers,
// public and legacy files). It has Pages pages (pages/pNNNN.html, one per
// 500 assets, at least 2), each loading the ten roots of its own 10-ary
// tree of n/10/Pages assets (an app's chunks, styles, fonts and images;
// the trees share no file). The instance's page, the one probed,
// references the first page's roots. A default gate's closure starts from
// every page: it checks every tree (Closure assets), the probed page's own
// tree alone being Closure/Pages; --all-assets checks all n+Pages files.
type ClosureBuild struct {
	// Files are the files the CDN serves, path → body, the pages included.
	Files map[string]string
	// Manifest lists Files with the asset graph, under the CDN base given.
	Manifest *manifest.Manifest
	// Probed are the assets the probed page references.
	Probed []string
	// Pages is the number of pages; Closure the assets a default gate
	// checks on the CDN (every page's tree), All the files of the build.
	Pages, Closure, All int
}

// NewClosureBuild returns the ClosureBuild of n assets (at least 100, not
// a multiple of 7919) under the CDN base cdn, with images.
func NewClosureBuild(n int, cdn string, images []manifest.Image) (*ClosureBuild, error) {
	if n < 100 || n%7919 == 0 {
		return nil, fmt.Errorf("a closure build of %d assets: want at least 100, not a multiple of 7919", n)
	}
	assets := Assets("bench", n)
	paths := Paths(assets)
	pages := max(2, n/500)
	files := make(map[string]string, n+pages)
	for p, body := range assets {
		files[p] = body
	}
	pageNames := make([]string, pages)
	for k := range pages {
		pageNames[k] = fmt.Sprintf("pages/p%04d.html", k)
		files[pageNames[k]] = fmt.Sprintf("<!doctype html><title>page %d</title>", k)
	}
	m, _, err := Manifest("store-web", 1, images, []string{cdn}, files)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, f := range m.Assets.Files {
		index[f.Path] = i
	}
	// The assets in an order that mixes their kinds: 7919 is prime, so
	// i*7919 mod n is a permutation unless it divides n.
	order := make([]string, n)
	for i := range order {
		order[i] = paths[(i*7919)%n]
	}
	size := n / 10 / pages
	b := &ClosureBuild{Files: files, Manifest: m, Pages: pages, All: n + pages}
	for k := range pages {
		tree := order[k*size : (k+1)*size]
		for j, p := range tree {
			var loads []string
			for c := 10 * (j + 1); c < min(10*(j+1)+10, size); c++ {
				loads = append(loads, tree[c])
			}
			slices.Sort(loads)
			m.Assets.Files[index[p]].Loads = loads
		}
		roots := slices.Clone(tree[:min(10, size)])
		slices.Sort(roots)
		m.Assets.Files[index[pageNames[k]]].Loads = roots
		if k == 0 {
			b.Probed = roots
		}
		b.Closure += size
	}
	m.APIVersion = m.Version()
	return b, nil
}
