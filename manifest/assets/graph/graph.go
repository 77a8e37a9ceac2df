package graph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// MaxRead is the largest file Build reads for references (64 MiB); a
// larger one keeps the edges the lists give it, and is logged.
const MaxRead = 64 << 20

// Options say where the files are and how the URLs in them map to the
// paths of the manifest: the same Dir, Lists, PublicPath and CDN the files
// were hashed with (assets.Options).
type Options struct {
	// Dir is the asset directory; the files' paths are relative to it.
	Dir string
	// Lists are the asset lists (assets.Options.Lists) whose edges are
	// taken (assets.List.Loads: Vite's imports, dynamicImports, css and
	// assets).
	Lists []string
	// PublicPath is the URL path the files are served under
	// (webpack's output.publicPath, "/static/"), as in assets.Options.
	PublicPath string
	// CDN holds the base URLs the files are served under.
	CDN []string
	// Workers bounds the files read at once; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Logger receives what was read and what could not be; nil is silent.
	Logger *slog.Logger
	// Collected, if set, holds the references of the files that
	// assets.Hash read (Collector): those are not read again.
	Collected *Collector
	// Excluded are the paths, relative to Dir, that were left out of the
	// release (assets.Result.Excluded): an entry list among them (by its
	// name, or .vite/manifest.json in an excluded .vite folder) is still
	// read for its entries, since a server reads it where no browser
	// does, and it need not be on the CDN.
	Excluded []string
}

// Collector gathers the references of the files as assets.Hash reads
// them: set assets.Options.Inspect to its Inspect method, then pass it to
// Build as Options.Collected, and Build reads none of those files again
// (nor hashes them again: what Inspect is given is what was hashed). Its
// methods are safe for concurrent use; the zero value is ready.
type Collector struct {
	mu   sync.Mutex
	refs map[string]readResult
}

// Inspect is an assets.Options.Inspect: it wants the files the graph
// reads (HTML, CSS, JavaScript, SVG, JSON, XML, text) up to MaxRead.
func (c *Collector) Inspect(p string, size int64) func(data []byte) {
	if !readable(kind(p)) || size > MaxRead {
		return nil
	}
	return func(data []byte) {
		r := refsOf(p, data)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.refs == nil {
			c.refs = map[string]readResult{}
		}
		c.refs[p] = r
	}
}

// collected returns what Inspect gathered for the file at p.
func (c *Collector) collected(p string) (readResult, bool) {
	if c == nil {
		return readResult{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.refs[p]
	return r, ok
}

// Result counts what Build found.
type Result struct {
	// Read is the number of files read for references (HTML, CSS,
	// JavaScript); Edges the number of loads set in all, FromLists those
	// that an asset list gave.
	Read      int `json:"read"`
	Edges     int `json:"edges"`
	FromLists int `json:"fromLists"`
	// Unparsed lists the JavaScript files the parser refused, read with
	// the lexer alone, sorted.
	Unparsed []string `json:"unparsed,omitempty"`
	// Unread lists, by path, the files whose loads the graph does not
	// know, or not all of: a type it cannot read that is not a leaf type
	// (see kind), a file that is not text though named as text, a file
	// that is not well-formed (what was read before the error is kept), a
	// file over MaxRead. Never silently taken as loading nothing: record
	// reports them, and only a check of every asset covers them.
	Unread []Unread `json:"unread,omitempty"`
	// Roots are the files the closure of a release starts from
	// (manifest.Assets.Roots: every page and entry file); Unreached lists,
	// sorted, the files that no root reaches through the graph: a gate
	// that probes no page naming them never checks them.
	Roots []string `json:"roots"`
	// Entries are the files that a bundler's list names as entry points,
	// each with the list that makes it one, sorted by path and list: those
	// no page reaches are roots (manifest.File.Entry).
	Entries   []Entry  `json:"entries,omitempty"`
	Unreached []string `json:"unreached,omitempty"`
}

// Unread is a file whose loads the graph does not know, and why.
type Unread struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Build sets the Loads of every file of files (sorted by path, as Hash
// returns them) to the files of the same set that it makes a browser load:
// what the asset lists say (Vite's chunk imports, dynamic imports, CSS and
// assets) and what reading the file shows: an HTML document's scripts
// (also data-src), stylesheets, preloads, icons and images; a
// stylesheet's url() and @import; a script's module specifiers, new URL(…,
// import.meta.url), worker URLs, SystemJS's imports, and every string
// literal that names a file of the set, or the content hash of one
// (webpack's chunk table). A reference is resolved against the referring
// file, then against the public path and the CDN bases; one that names no
// file of the set (an external URL, a data: URI) is no edge.
//
// What the graph cannot hold: a URL computed at run time from pieces no
// literal holds (a name assembled from parts, fetched from an API) is
// invisible to a reading of the code. A file's loads are a lower bound;
// cdn check and admit --all-assets check every file.
//
// The files that a bundler's list names as entry points (Vite's isEntry
// chunks, webpack's entrypoints, Next.js's build manifests: see entries
// and listNames), in Options.Lists or among the files by their usual
// names, are roots of the closure beside the pages: those no page
// reaches are marked manifest.File.Entry (a page that names one already
// leads the gate to it); Result.Entries says which list named each. An
// entry that is not a file of files (excluded, or the list is of another
// build), a path outside the asset directory or a URL under none of the
// CDN bases is an *assets.Error: never followed, never fetched.
//
// A file that Options.Collected holds is not read again (record reads
// each file once, as it hashes it). Any other is read and its SHA-256
// compared with the recorded one: a file that changed since it was hashed
// is an *assets.Error, as is one that cannot be read, or an asset list
// that cannot be parsed. A file that is not text (a NUL or invalid UTF-8
// at its start) has no references.
func Build(ctx context.Context, files []manifest.File, opts Options) (*Result, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	r := newResolver(paths, opts.PublicPath, opts.CDN)
	loads := make([]map[string]bool, len(files))
	index := make(map[string]int, len(files))
	for i, p := range paths {
		index[p] = i
	}
	res := &Result{}
	addLoad := func(i int, to string) bool {
		if to == files[i].Path || !r.files[to] {
			return false
		}
		if loads[i] == nil {
			loads[i] = map[string]bool{}
		}
		if loads[i][to] {
			return false
		}
		loads[i][to] = true
		return true
	}
	entryFiles, listLoads, listUnread, err := entries(files, opts, index)
	if err != nil {
		return nil, err
	}
	res.Unread = append(res.Unread, listUnread...)
	for from, tos := range listLoads {
		i, ok := index[from]
		if !ok {
			continue // excluded, or not recorded
		}
		for _, to := range tos {
			if addLoad(i, to) {
				res.FromLists++
			}
		}
	}
	for i := range files {
		files[i].Entry = false
	}

	read, err := readAll(ctx, files, opts)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if kind(f.Path) == kindUnknown {
			res.Unread = append(res.Unread, Unread{Path: f.Path, Reason: unknownReason(f.Path)})
		}
	}
	for _, rd := range read {
		for _, b := range rd.bases {
			r.addRuntimeBase(b)
		}
	}
	for _, rd := range read {
		if rd.unread != "" {
			res.Unread = append(res.Unread, Unread{Path: files[rd.i].Path, Reason: rd.unread})
		}
		res.Read++
		if !rd.parsed {
			res.Unparsed = append(res.Unparsed, files[rd.i].Path)
		}
		for _, ref := range rd.refs {
			if p, ok := r.resolve(files[rd.i].Path, ref); ok {
				addLoad(rd.i, p)
			}
			if rd.js {
				for _, p := range r.hashes[ref] {
					addLoad(rd.i, p)
				}
			}
		}
	}
	for i := range files {
		files[i].Loads = nil
		for to := range loads[i] {
			files[i].Loads = append(files[i].Loads, to)
		}
		slices.Sort(files[i].Loads)
		res.Edges += len(files[i].Loads)
	}
	slices.Sort(res.Unparsed)
	slices.SortFunc(res.Unread, func(a, b Unread) int { return strings.Compare(a.Path, b.Path) })
	reach := &manifest.Assets{Files: files}
	// An entry file that a page reaches needs no mark: the gate checks it
	// from the page, and the manifest stays lockstep.dev/v2 for older
	// gates. Every other entry is marked, a root of its own.
	byPages := map[string]bool{}
	for _, p := range reach.Closure(reach.Roots()) {
		byPages[p] = true
	}
	for i, e := range entryFiles {
		entryFiles[i].PageReached = byPages[e.Path]
		if !byPages[e.Path] {
			files[index[e.Path]].Entry = true
		}
	}
	res.Entries = entryFiles
	res.Roots = reach.Roots()
	reached := map[string]bool{}
	for _, p := range reach.Closure(res.Roots) {
		reached[p] = true
	}
	for _, f := range files {
		if !reached[f.Path] {
			res.Unreached = append(res.Unreached, f.Path)
		}
	}
	for _, u := range res.Unread {
		log.Warn("the asset graph cannot tell what this file loads", "path", u.Path, "reason", u.Reason)
	}
	if len(res.Unreached) > 0 {
		log.Warn("files that no root of the release (a page, or an entry file a bundler's list names) reaches by the asset graph: a gate checks them only when a probed page names them, or with every asset", "count", len(res.Unreached), "paths", strings.Join(res.Unreached, " "))
	}
	if len(res.Unparsed) > 0 {
		log.Info("read with the JavaScript lexer alone (the parser refused them)", "count", len(res.Unparsed), "paths", strings.Join(res.Unparsed, " "))
	}
	log.Info("asset graph", "read", res.Read, "edges", res.Edges, "fromLists", res.FromLists, "roots", len(res.Roots), "entries", len(res.Entries), "unreached", len(res.Unreached), "unread", len(res.Unread))
	return res, nil
}

type readResult struct {
	i    int
	refs []string
	// bases are the public paths a bundle runtime in the file joins its
	// chunk names to (jsRefs.bases).
	bases  []string
	js     bool
	parsed bool
	// unread says why the file's loads are not known, or not all of them
	// (not text, not well-formed): it is reported (Result.Unread).
	unread string
	err    error
}

// readAll reads the HTML, CSS and JavaScript files on a pool of workers
// and returns their references, in the order of files.
func readAll(ctx context.Context, files []manifest.File, opts Options) ([]readResult, error) {
	var todo []int
	for i, f := range files {
		if readable(kind(f.Path)) {
			todo = append(todo, i)
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, max(len(todo), 1))
	out := make([]readResult, len(todo))
	jobs := make(chan int)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if r, ok := opts.Collected.collected(files[todo[j]].Path); ok {
					r.i = todo[j]
					out[j] = r
					continue
				}
				out[j] = readOne(opts.Dir, todo[j], files[todo[j]])
				if out[j].err != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for j := range todo {
		select {
		case jobs <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	for _, r := range out {
		if r.err != nil {
			return nil, r.err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// readOne reads one file, checks it is the one that was hashed, and
// returns its references.
func readOne(dir string, i int, f manifest.File) readResult {
	rr := readResult{i: i, parsed: true}
	if f.Size > MaxRead {
		rr.unread = fmt.Sprintf("larger than the %d bytes the graph reads", MaxRead)
		return rr
	}
	data, err := readHashed(dir, f)
	if err != nil {
		rr.err = err
		return rr
	}
	refs := refsOf(f.Path, data)
	refs.i = i
	return refs
}

// readHashed reads the file f of dir and checks that it is the one that
// was hashed: an *assets.Error when it cannot be read or has changed.
func readHashed(dir string, f manifest.File) ([]byte, error) {
	fh, err := os.Open(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if err != nil {
		return nil, &assets.Error{Path: f.Path, Reason: "cannot open", Err: err}
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, f.Size+1))
	if err != nil {
		return nil, &assets.Error{Path: f.Path, Reason: "cannot read", Err: err}
	}
	if sum := sha256.Sum256(data); int64(len(data)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, &assets.Error{Path: f.Path, Reason: fmt.Sprintf("changed since it was hashed (%d bytes now, %d recorded)", len(data), f.Size)}
	}
	return data, nil
}

// refsOf returns the references in a file's bytes, by its kind. A file
// whose loads cannot all be known (not text, not well-formed) says why in
// unread.
func refsOf(p string, data []byte) readResult {
	rr := readResult{parsed: true}
	k := kind(p)
	if !looksLikeText(data) {
		rr.unread = "not text, though named as a " + k + " file"
		return rr
	}
	var err error
	switch k {
	case kindHTML:
		rr.refs = htmlRefs(p, data)
	case kindCSS:
		rr.refs = cssRefs(data)
	case kindJS:
		rr.js = true
		var r jsRefs
		r, rr.parsed = jsRead(data)
		rr.refs, rr.bases = r.strings, r.bases
	case kindSVG:
		rr.refs, err = svgRefs(p, data)
	case kindJSON, kindWebMan:
		rr.refs, err = jsonRefs(k, data)
	case kindXML:
		rr.refs, err = xmlRefs(data)
	case kindText:
		rr.refs = textRefs(data)
	}
	if err != nil {
		rr.unread = fmt.Sprintf("not a well-formed %s file: %v", k, err)
	}
	return rr
}

// looksLikeText says whether the start of a file is text: no NUL byte and
// valid UTF-8 in its first 1 KiB (a character cut at the 1 KiB mark
// allowed). A file named .js that holds binary data is no script a browser
// runs, and reading it for references would cost a parse of noise.
func looksLikeText(data []byte) bool {
	head := data[:min(len(data), 1024)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n <= 1 {
			return len(head) < utf8.UTFMax && len(data) > 1024
		}
		head = head[n:]
	}
	return true
}

// unknownReason says why a file of a type the graph does not read is
// reported.
func unknownReason(p string) string {
	if ext := path.Ext(p); ext != "" {
		return "a type the asset graph does not read (" + ext + ") and not a leaf type"
	}
	return "no extension: a type the asset graph does not read"
}
