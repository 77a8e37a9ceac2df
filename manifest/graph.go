package manifest

import (
	"path"
	"slices"
	"strings"
)

// Closure returns every path reachable from roots through the files'
// Loads: the roots that are files of a, and everything they load, directly
// or not, each once, sorted. A root that is not a file of a is left out
// (the caller decides what an unknown reference means). Cycles end where
// they meet a path already taken. With no graph (a v1 manifest) the
// closure is the roots that are files. a.Files is sorted by path, as
// Validate requires.
func (a *Assets) Closure(roots []string) []string {
	seen := make(map[string]bool, len(roots))
	var out, queue []string
	visit := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		queue = append(queue, p)
	}
	for _, r := range roots {
		if a.index(r) >= 0 {
			visit(r)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		// Loads are validated to name files of a; the lookup guards a
		// manifest built in code and never validated.
		if i := a.index(p); i >= 0 {
			for _, l := range a.Files[i].Loads {
				if a.index(l) >= 0 {
					visit(l)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// index returns the index of path p in a.Files (sorted by path), or -1.
func (a *Assets) index(p string) int {
	i, ok := slices.BinarySearchFunc(a.Files, p, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return -1
	}
	return i
}

// Roots returns the files a release's closure starts from, sorted: every
// page (an .html or .htm file), every .txt file (React Server
// Components payloads, which Next.js's router fetches for each route it
// prefetches, by a name no file holds), and every entry file (File.Entry:
// named by a bundler's list, its tag rendered by a server). A gate checks
// what every root loads, not only what the probed pages do: a route that
// is not probed still serves its chunks, styles and fonts.
func (a *Assets) Roots() []string {
	var out []string
	for _, f := range a.Files {
		if f.Entry || isPage(f.Path) {
			out = append(out, f.Path)
		}
	}
	return out
}

// isPage says whether p names a page: an HTML document or a .txt route
// payload, which the instance may serve and a browser navigates to or
// fetches by the route's name; a root of the closure (Roots).
func isPage(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".html" || ext == ".htm" || ext == ".txt"
}
