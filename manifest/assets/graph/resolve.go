package graph

import (
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// resolver turns a reference found in a file into the path of a file of
// the manifest, or nothing.
type resolver struct {
	files map[string]bool
	// prefixes are the URL paths under which the files are served, longest
	// first, each ending in "/": the public path, each CDN base's path,
	// and "/".
	prefixes []string
	// bases are the CDN base URLs, each ending in "/".
	bases []*url.URL
	// publicDir is the public path without its leading "/" ("static/"):
	// a reference relative to the public path (webpack's chunk names,
	// Vite's preload lists relative to its base) carries no "/".
	publicDirs []string
	// hashes maps the content hash in a file's name (assets.NameHash) to
	// the files that carry it, source maps left out.
	hashes map[string][]string
	// runtimeDirs are the folders of the set that a bundle runtime joins
	// relative names to (addRuntimeBase), longest first.
	runtimeDirs []string
}

func newResolver(paths []string, publicPath string, cdn []string) *resolver {
	r := &resolver{files: make(map[string]bool, len(paths)), hashes: map[string][]string{}}
	for _, p := range paths {
		r.files[p] = true
		if h := nameHash(p); h != "" && !strings.HasSuffix(p, ".map") {
			r.hashes[h] = append(r.hashes[h], p)
		}
	}
	prefixes := map[string]bool{"/": true}
	dirs := map[string]bool{}
	addPrefix := func(p string) {
		p = "/" + strings.Trim(p, "/") + "/"
		if p == "//" {
			return
		}
		prefixes[p] = true
		dirs[strings.TrimPrefix(p, "/")] = true
	}
	if publicPath != "" {
		if u, err := url.Parse(publicPath); err == nil && u.Host != "" {
			addPrefix(u.Path)
		} else {
			addPrefix(publicPath)
		}
	}
	for _, b := range cdn {
		u, err := url.Parse(strings.TrimSuffix(b, "/") + "/")
		if err != nil || u.Host == "" {
			continue
		}
		r.bases = append(r.bases, u)
		addPrefix(u.Path)
	}
	for p := range prefixes {
		r.prefixes = append(r.prefixes, p)
	}
	// Next.js's runtime joins its chunk and CSS names
	// ("static/chunks/…") to assetPrefix + "/_next/", the folder its build
	// writes them to.
	if r.isDir(nextDir) {
		r.runtimeDirs = []string{nextDir}
	}
	for d := range dirs {
		r.publicDirs = append(r.publicDirs, d)
	}
	longestFirst(r.prefixes)
	longestFirst(r.publicDirs)
	return r
}

// nextDir is the folder of a Next.js build's assets (_next/static/…).
const nextDir = "_next/"

// isDir says whether some file of the set is under dir ("static/").
func (r *resolver) isDir(dir string) bool {
	for p := range r.files {
		if strings.HasPrefix(p, dir) {
			return true
		}
	}
	return false
}

// addRuntimeBase adds the folder a bundle runtime joins its chunk names
// to (webpack's __webpack_require__.p = "/build/" or
// "https://cdn.example/_next/") to the folders a relative reference is
// resolved in, after the referring file's and the public path: when it is
// a folder of the set under the root, the public path or a CDN base.
// "auto" (webpack's public path taken from the script's own URL), a
// public path that is the root of the set (it is tried anyway) and any
// other value are left out.
func (r *resolver) addRuntimeBase(b string) {
	b = strings.TrimSpace(b)
	if b == "" || !strings.HasSuffix(b, "/") {
		return
	}
	var dir string
	switch {
	case strings.HasPrefix(b, "//"), hasScheme(b):
		u, err := url.Parse(b)
		if strings.HasPrefix(b, "//") {
			u, err = url.Parse("https:" + b)
		}
		if err != nil {
			return
		}
		for _, base := range r.bases {
			if rest, ok := strings.CutPrefix(u.Path, base.Path); ok && strings.EqualFold(u.Host, base.Host) {
				dir = rest
				break
			}
		}
		if dir == "" {
			return
		}
	case b[0] == '/':
		for _, pre := range r.prefixes {
			if rest, ok := strings.CutPrefix(b, pre); ok && rest != "" && r.isDir(rest) {
				dir = rest
				break
			}
		}
	default:
		dir = b
	}
	if dir = clean(dir); dir == "" {
		return
	}
	dir += "/"
	if slices.Contains(r.runtimeDirs, dir) || !r.isDir(dir) {
		return
	}
	r.runtimeDirs = append(r.runtimeDirs, dir)
	longestFirst(r.runtimeDirs)
}

// nameHash is the content hash in the name of the file at p
// (assets.NameHash), or its whole stem when that is a hash: webpack's
// "[contenthash].css" (mini-css-extract's chunkFilename, whose runtime
// table miniCssF names the file by its hash alone). A whole stem counts
// as a hash when it is 8 or more lower-case hex digits that mix digits
// and letters (webpack's hex digest): "20261202.pdf" and
// "deadbeef.png" are names, not hashes, and a string that equals
// them is no reference.
func nameHash(p string) string {
	if h := assets.NameHash(p); h != "" {
		return h
	}
	stem, _, _ := strings.Cut(path.Base(p), ".")
	if len(stem) < 8 {
		return ""
	}
	var digit, letter bool
	for i := 0; i < len(stem); i++ {
		switch c := stem[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f':
			letter = true
		default:
			return ""
		}
	}
	if digit && letter {
		return stem
	}
	return ""
}

// resolve returns the file of the manifest that ref, found in the file
// from, names: a URL under a CDN base; an absolute path under the public
// path, a CDN base's path or the root; a relative reference against from's
// directory, then against the public path. A query or fragment is
// dropped; another scheme (data:, blob:, an external host) names no file
// of the manifest, nor does a reference to from itself.
func (r *resolver) resolve(from, ref string) (string, bool) {
	ref = strings.TrimSpace(ref)
	if ref == "" || ref[0] == '#' || ref[0] == '?' {
		return "", false
	}
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		ref = ref[:i]
	}
	if strings.Contains(ref, "%") {
		if u, err := url.PathUnescape(ref); err == nil {
			ref = u
		}
	}
	var p string
	var ok bool
	switch {
	case strings.HasPrefix(ref, "//"):
		p, ok = r.underBase("https:" + ref)
	case hasScheme(ref):
		p, ok = r.underBase(ref)
	case ref[0] == '/':
		p, ok = r.absolute(ref)
	default:
		p, ok = r.relative(from, ref)
	}
	if !ok || p == from {
		return "", false
	}
	return p, true
}

func (r *resolver) underBase(ref string) (string, bool) {
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	for _, b := range r.bases {
		if rest, ok := strings.CutPrefix(u.Path, b.Path); ok && strings.EqualFold(u.Host, b.Host) {
			if p, ok := r.underPublic(rest); ok {
				return p, true
			}
		}
	}
	return "", false
}

func (r *resolver) absolute(ref string) (string, bool) {
	for _, pre := range r.prefixes {
		if rest, ok := strings.CutPrefix(ref, pre); ok {
			if p := clean(rest); r.files[p] {
				return p, true
			}
		}
	}
	return "", false
}

func (r *resolver) relative(from, ref string) (string, bool) {
	if p := clean(path.Join(path.Dir(from), ref)); r.files[p] {
		return p, true
	}
	if p, ok := r.underPublic(strings.TrimPrefix(ref, "./")); ok {
		return p, true
	}
	for _, d := range r.runtimeDirs {
		if p := clean(d + ref); strings.HasPrefix(p, d) && r.files[p] {
			return p, true
		}
	}
	return "", false
}

// underPublic resolves a path relative to the root of the files' URLs:
// under the public path, or as it is.
func (r *resolver) underPublic(rel string) (string, bool) {
	for _, d := range r.publicDirs {
		if rest, ok := strings.CutPrefix(rel, d); ok {
			if p := clean(rest); r.files[p] {
				return p, true
			}
		}
	}
	if p := clean(rel); r.files[p] {
		return p, true
	}
	return "", false
}

// longestFirst sorts s by length, the longest first, then in order.
func longestFirst(s []string) {
	sort.Slice(s, func(i, j int) bool {
		if len(s[i]) != len(s[j]) {
			return len(s[i]) > len(s[j])
		}
		return s[i] < s[j]
	})
}

// clean is a path relative to the asset directory, or "" for one that
// leaves it.
func clean(p string) string {
	p = path.Clean("/" + p)[1:]
	return p
}

// hasScheme says whether ref starts with a URL scheme ("data:", "https:").
func hasScheme(ref string) bool {
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case c == ':':
			return i > 0
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}
