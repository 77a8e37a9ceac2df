package graph

import (
	"net/url"
	"path"
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
}

func newResolver(paths []string, publicPath string, cdn []string) *resolver {
	r := &resolver{files: make(map[string]bool, len(paths)), hashes: map[string][]string{}}
	for _, p := range paths {
		r.files[p] = true
		if h := assets.NameHash(p); h != "" && !strings.HasSuffix(p, ".map") {
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
	for d := range dirs {
		r.publicDirs = append(r.publicDirs, d)
	}
	longestFirst := func(s []string) {
		sort.Slice(s, func(i, j int) bool {
			if len(s[i]) != len(s[j]) {
				return len(s[i]) > len(s[j])
			}
			return s[i] < s[j]
		})
	}
	longestFirst(r.prefixes)
	longestFirst(r.publicDirs)
	return r
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
	return r.underPublic(strings.TrimPrefix(ref, "./"))
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
