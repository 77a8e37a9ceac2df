package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// Entry is a file that a bundler's list names as an entry point: a root
// of the release's closure (manifest.File.Entry) although no page may
// name it, because a server renders its tag from the list.
type Entry struct {
	// Path is the entry file, relative to the asset directory.
	Path string `json:"path"`
	// List is the list that makes it a root: its path relative to the
	// asset directory when it is a file of the release, else as given
	// (Options.Lists).
	List string `json:"list"`
	// Format is the list's format: one of assets' Format constants,
	// FormatNextBuildManifest, or FormatNextRuntime for Next.js's router
	// manifests, which are entries by their own name.
	Format string `json:"format"`
	// PageReached says that a page of the release reaches the file too
	// (its HTML names it): the gate checks it from there, so the manifest
	// does not mark it (manifest.File.Entry) and stays readable by
	// lockstep.dev/v2 gates. Otherwise it is marked, a root of its own.
	PageReached bool `json:"pageReached,omitempty"`
}

// The entry lists Build reads besides assets.ParseList's formats.
const (
	// FormatNextBuildManifest is Next.js's build-manifest.json (in .next/;
	// a static export does not ship it): the files of every page, of the
	// polyfills and of the root layout, relative to its folder (/_next/).
	FormatNextBuildManifest = "next-build-manifest"
	// FormatNextRuntime is Next.js's _buildManifest.js and
	// _ssgManifest.js, under _next/static/BUILD_ID/: the router loads them
	// on every page of the pages router, and they name every route's
	// chunks (read as JavaScript).
	FormatNextRuntime = "next-runtime"
)

// listNames are the names under which bundlers write their entry lists
// into the build (a file of the release that is one of these, and parses
// as one, is read for its entries): Vite's .vite/manifest.json (and
// manifest.json before Vite 5, the name webpack-manifest-plugin uses
// too), create-react-app's asset-manifest.json, webpack-assets-manifest's
// assets-manifest.json, assets-webpack-plugin's webpack-assets.json, and
// Next.js's build-manifest.json. A file of one of the specific names that
// is no such list is reported (Result.Unread); manifest.json, which is
// also a web app manifest's name, is a list only when it parses as one.
var listNames = map[string]bool{
	"manifest.json": true, "asset-manifest.json": true, "assets-manifest.json": true,
	"webpack-assets.json": true, "build-manifest.json": true,
}

// entryList is an asset list read for its entries.
type entryList struct {
	name string // as Entry.List says it
	data []byte
	// dir is the list's folder, relative to the asset directory, for the
	// formats whose entries are relative to it (Next.js's); "" else.
	dir string
	// given is a list of Options.Lists: one that is not usable is an error.
	given bool
}

// entries returns the entry files that the asset lists name (Options.Lists
// and the lists that are files of the release), sorted by path and list,
// and the edges those in the release give (Vite's imports, css, assets),
// by file. A list in the release that is not usable is reported in unread.
// An entry that names no file of the release, a path outside the asset
// directory or a URL under none of the CDN bases is an *assets.Error: the
// list belongs to another build, or is stale, and a server rendering its
// tags would send browsers to files nobody checked. No entry is fetched.
func entries(files []manifest.File, opts Options, index map[string]int) (out []Entry, loads map[string][]string, unread []Unread, err error) {
	var lists []entryList
	given := map[string]bool{}
	for _, l := range opts.Lists {
		data, err := os.ReadFile(l)
		if err != nil {
			return nil, nil, nil, &assets.Error{Path: l, Reason: "cannot read the asset list", Err: err}
		}
		lists = append(lists, entryList{name: l, data: data, given: true})
		if rel, ok := relTo(opts.Dir, l); ok {
			lists[len(lists)-1].dir = path.Dir(rel)
		}
		if rel, ok := relTo(opts.Dir, l); ok {
			given[rel] = true
		}
	}
	for _, f := range files {
		if given[f.Path] {
			continue // read above
		}
		base := path.Base(f.Path)
		if format := runtimeEntry(f.Path); format != "" {
			out = append(out, Entry{Path: f.Path, List: f.Path, Format: format})
			continue
		}
		if !listNames[base] {
			continue
		}
		data, err := readHashed(opts.Dir, f)
		if err != nil {
			return nil, nil, nil, err
		}
		lists = append(lists, entryList{name: f.Path, data: data, dir: path.Dir(f.Path)})
	}
	for _, x := range opts.Excluded {
		if path.Base(x) == ".vite" {
			x = path.Join(x, "manifest.json")
		}
		if !listNames[path.Base(x)] || given[x] {
			continue
		}
		data, err := os.ReadFile(filepath.Join(opts.Dir, filepath.FromSlash(x)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // an excluded folder without a list
		}
		if err != nil {
			return nil, nil, nil, &assets.Error{Path: x, Reason: "cannot read the excluded asset list", Err: err}
		}
		lists = append(lists, entryList{name: x, data: data, dir: path.Dir(x)})
	}
	loads = map[string][]string{}
	for _, l := range lists {
		format, paths, listLoads, err := readEntryList(l, opts)
		var notList notAList
		switch {
		case errors.As(err, &notList) && l.given:
			return nil, nil, nil, &assets.Error{Path: l.name, Reason: "not a usable asset list", Err: notList.err}
		case errors.As(err, &notList):
			if path.Base(l.name) != "manifest.json" || strings.HasSuffix(l.name, ".vite/manifest.json") {
				unread = append(unread, Unread{Path: l.name, Reason: fmt.Sprintf("named like a bundler's entry list but not one (%v): its entry files, if any, are no roots", notList.err)})
			}
			continue
		case err != nil:
			return nil, nil, nil, &assets.Error{Path: l.name, Reason: "is an entry list naming what is outside the release (never followed)", Err: err}
		}
		for _, p := range paths {
			if err := manifest.ValidatePath(p); err != nil {
				return nil, nil, nil, &assets.Error{Path: l.name, Reason: fmt.Sprintf("names the entry %q outside the asset directory (never followed)", p), Err: err}
			}
			if _, ok := index[p]; !ok {
				return nil, nil, nil, &assets.Error{Path: l.name, Reason: fmt.Sprintf("names the entry %q, which is not a file of the release (excluded, or the list is of another build)", p), PublicPath: publicPathHint(p, index)}
			}
			out = append(out, Entry{Path: p, List: l.name, Format: format})
		}
		for from, tos := range listLoads {
			loads[from] = append(loads[from], tos...)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return cmpOr(strings.Compare(a.Path, b.Path), strings.Compare(a.List, b.List))
	})
	out = slices.Compact(out)
	return out, loads, unread, nil
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// notAList says a file named like an entry list is not one.
type notAList struct{ err error }

func (e notAList) Error() string { return e.err.Error() }

// readEntryList returns a list's format, its entry files and the edges it
// gives. A document that is no list of a known shape is a notAList; an
// entry it cannot place (a URL under none of the CDN bases) another error.
func readEntryList(l entryList, opts Options) (format string, paths []string, loads map[string][]string, err error) {
	if path.Base(l.name) == "build-manifest.json" {
		paths, err := nextBuildManifest(l.data, l.dir)
		return FormatNextBuildManifest, paths, nil, err
	}
	if _, _, err := assets.ListEntries(l.data); err != nil {
		return "", nil, nil, notAList{err}
	}
	if path.Base(l.name) == "manifest.json" && !l.given {
		var top map[string]json.RawMessage
		if json.Unmarshal(l.data, &top) == nil && isWebManifest(top) {
			return "", nil, nil, notAList{errors.New("a web app manifest")}
		}
	}
	list, err := assets.ParseList(l.data, opts.PublicPath, opts.CDN)
	if err != nil {
		return "", nil, nil, err
	}
	return list.Format, list.Entries, list.Loads, nil
}

// nextBuildManifest returns the files Next.js's build-manifest.json names
// for its pages, polyfills and root layout, relative to dir (the list's
// folder, which the browser fetches as /_next/).
func nextBuildManifest(data []byte, dir string) ([]string, error) {
	var m struct {
		Pages            map[string][]string `json:"pages"`
		PolyfillFiles    []string            `json:"polyfillFiles"`
		RootMainFiles    []string            `json:"rootMainFiles"`
		LowPriorityFiles []string            `json:"lowPriorityFiles"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, notAList{err}
	}
	if m.Pages == nil {
		return nil, notAList{errors.New(`no "pages" member: not Next.js's build manifest`)}
	}
	var out []string
	add := func(names []string) {
		for _, n := range names {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, path.Join(dir, n))
			}
		}
	}
	add(m.PolyfillFiles)
	add(m.RootMainFiles)
	add(m.LowPriorityFiles)
	for _, p := range slices.Sorted(maps.Keys(m.Pages)) {
		add(m.Pages[p])
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// runtimeEntry says which runtime loads the file p by its own name (a
// root with no list naming it), or "".
func runtimeEntry(p string) string {
	switch path.Base(p) {
	case "_buildManifest.js", "_ssgManifest.js":
		if strings.Contains(p, "static/") {
			return FormatNextRuntime
		}
	}
	return ""
}

// relTo returns file relative to dir, with forward slashes, when it lies
// inside it.
func relTo(dir, file string) (string, bool) {
	if dir == "" {
		return "", false
	}
	d, err1 := filepath.Abs(dir)
	f, err2 := filepath.Abs(file)
	if err1 != nil || err2 != nil {
		return "", false
	}
	if rd, err := filepath.EvalSymlinks(d); err == nil {
		d = rd
	}
	if rf, err := filepath.EvalSymlinks(f); err == nil {
		f = rf
	}
	rel, err := filepath.Rel(d, f)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// publicPathHint returns the leading folders of a missing entry without
// which it is a file of the release, as a prefix ("/static/"), or "".
func publicPathHint(p string, index map[string]int) string {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		if _, ok := index[strings.Join(parts[i:], "/")]; ok {
			return "/" + strings.Join(parts[:i], "/") + "/"
		}
	}
	return ""
}
