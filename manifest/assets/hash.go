package assets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lockstep-dev/lockstep/manifest"
)

// bufSize is each worker's read buffer: large enough that a typical asset
// is one read, and that big files cost few system calls.
const bufSize = 1 << 20

// Options say which files to hash.
type Options struct {
	// Dir is the directory the CDN serves; every path is relative to it.
	// It is required.
	Dir string
	// Lists are asset lists (a Vite .vite/manifest.json, or a webpack
	// assets manifest) naming the files to hash, resolved against Dir.
	Lists []string
	// Walk hashes every file under Dir as well as the Lists' files. Dir is
	// always walked when there are no Lists.
	Walk bool
	// Unlisted says what becomes of the files under Dir that the Lists do
	// not name (Vite copies public/ there: favicon.ico, robots.txt), which
	// the CDN serves all the same: UnlistedRecord (the default) hashes
	// them too and names them in Result.Unlisted; UnlistedRefuse returns
	// an *Error naming them. The Lists' own files and Exclude's matches
	// are not counted.
	Unlisted Unlisted
	// Exclude holds path.Match patterns; a file or directory whose path
	// relative to Dir, or whose name, matches one is left out of the walk
	// and counted in Result.Excluded. It applies to the Lists' entries as
	// well (webpack's lists name *.map and index.html): an entry that
	// matches, or that lies in a directory that matches, is left out and
	// counted the same way. A recorded file is never in Result.Excluded.
	Exclude []string
	// PublicPath is a prefix that asset list entries carry and paths
	// relative to Dir do not (webpack's output.publicPath, e.g. "/static/").
	// A leading "/" is always removed.
	PublicPath string
	// CDN holds the CDN base URLs: an asset list entry that is an absolute
	// URL under one of them is taken relative to it.
	CDN []string
	// Workers bounds the files hashed at once; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Progress, if set, is called from one goroutine after each file with
	// the bytes hashed so far and the total.
	Progress func(done, total int64)
	// Logger receives what was excluded; nil is silent.
	Logger *slog.Logger
	// Inspect, if set, is asked by the hashing workers about each file
	// before it is read; for a file it returns a function for, the file is
	// read whole into memory, hashed, and the function is called with the
	// hashed bytes (so what it inspects is what was recorded), on the
	// worker's goroutine. The function must not keep the bytes past its
	// return: they may be the worker's buffer, read into again. The asset graph reads references this way
	// (graph.Collector), so that no file is read twice.
	Inspect func(path string, size int64) func(data []byte)
}

// Unlisted is Options.Unlisted.
type Unlisted string

// The values of Options.Unlisted.
const (
	UnlistedRecord Unlisted = "record"
	UnlistedRefuse Unlisted = "refuse"
)

// ParseUnlisted parses "record" or "refuse"; "" is UnlistedRecord.
func ParseUnlisted(s string) (Unlisted, error) {
	switch Unlisted(s) {
	case "", UnlistedRecord:
		return UnlistedRecord, nil
	case UnlistedRefuse:
		return UnlistedRefuse, nil
	}
	return "", fmt.Errorf("unlisted %q: want record or refuse", s)
}

// Result is a hashed asset set.
type Result struct {
	// Files is sorted by Path, each Path once.
	Files []manifest.File
	// Bytes is the sum of the files' sizes.
	Bytes int64
	// Excluded lists the paths Options.Exclude left out, sorted; a
	// directory counts once.
	Excluded []string
	// Unlisted lists the files under Dir that the Lists do not name and
	// that were recorded all the same (Options.Unlisted), sorted.
	Unlisted []string
}

// Error is a file of the asset set that cannot be recorded: a symlink
// leaving the directory, a special file, an unsafe path, an unreadable
// file or asset list. It is the input that is wrong.
type Error struct {
	// Path is relative to the asset directory (or an asset list's path).
	Path   string
	Reason string
	Err    error
	// PublicPath, when set, is the prefix that the asset list's entries
	// carry and the asset directory does not have ("/static/"): the
	// missing file is there without it, so Options.PublicPath should
	// probably be this.
	PublicPath string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("asset %s: %s", e.Path, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.PublicPath != "" {
		msg += fmt.Sprintf(" (the asset directory has it without the prefix %q: is that the public path?)", e.PublicPath)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Hash collects the asset set that opts describe and hashes every file.
// Errors are an *Error for a file that cannot be recorded, or ctx's error.
func Hash(ctx context.Context, opts Options) (*Result, error) {
	if opts.Dir == "" {
		return nil, &Error{Path: ".", Reason: "no asset directory given"}
	}
	root, err := filepath.Abs(opts.Dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, &Error{Path: opts.Dir, Reason: "cannot open the asset directory", Err: err}
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, &Error{Path: opts.Dir, Reason: "is not a directory", Err: err}
	}
	w := &walker{root: root, opts: opts, seen: map[string]string{}}
	for _, l := range opts.Lists {
		if err := w.list(l); err != nil {
			return nil, err
		}
	}
	listed := len(w.files)
	if err := w.dir(ctx, root, "", []string{root}); err != nil {
		return nil, err
	}
	var unlisted []string
	if len(opts.Lists) > 0 && !opts.Walk {
		if unlisted, err = w.unlisted(listed); err != nil {
			return nil, err
		}
	}
	sort.Slice(w.files, func(i, j int) bool { return w.files[i].rel < w.files[j].rel })
	sort.Strings(w.excluded)
	if log := opts.Logger; log != nil && len(w.excluded) > 0 {
		log.Info("excluded from the asset set", "count", len(w.excluded), "paths", strings.Join(w.excluded, " "))
	}
	files, total, err := hashAll(ctx, w.files, opts)
	if err != nil {
		return nil, err
	}
	return &Result{Files: files, Bytes: total, Excluded: w.excluded, Unlisted: unlisted}, nil
}

// unlisted sorts out the files the walk found beyond the first listed
// ones (the Lists'): the Lists' own files are dropped, and the rest are
// refused or kept as Options.Unlisted says.
func (w *walker) unlisted(listed int) ([]string, error) {
	lists := map[string]bool{}
	for _, l := range w.opts.Lists {
		if abs, err := filepath.Abs(l); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				lists[real] = true
			}
		}
	}
	var names []string
	kept := w.files[:listed]
	for _, p := range w.files[listed:] {
		if lists[p.abs] {
			continue
		}
		names = append(names, p.rel)
		kept = append(kept, p)
	}
	w.files = kept
	sort.Strings(names)
	if len(names) == 0 {
		return nil, nil
	}
	if w.opts.Unlisted == UnlistedRefuse {
		return nil, &Error{Path: names[0], Reason: fmt.Sprintf(
			"%d files under the asset directory are not named by the asset lists, and the CDN serves them too: %s (record them, or leave them out with an exclude pattern)",
			len(names), strings.Join(names, ", "))}
	}
	if log := w.opts.Logger; log != nil {
		log.Info("recorded files the asset lists do not name", "count", len(names), "paths", strings.Join(names, " "))
	}
	return names, nil
}

// pending is one file to hash: its path in the manifest and on disk.
type pending struct {
	rel, abs string
}

type walker struct {
	root     string
	opts     Options
	files    []pending
	seen     map[string]string // rel -> abs
	excluded []string
	// excludedSet holds excluded's paths, which the lists and the walk
	// may both come upon.
	excludedSet map[string]bool
}

// exclude records that rel was left out.
func (w *walker) exclude(rel string) {
	if w.excludedSet == nil {
		w.excludedSet = map[string]bool{}
	}
	if !w.excludedSet[rel] {
		w.excludedSet[rel] = true
		w.excluded = append(w.excluded, rel)
	}
}

// excludedEntry says whether an asset list's entry is left out: it, or a
// directory it lies in, matches a pattern (as the walk would have left it
// out). The path counted is the entry's own.
func (w *walker) excludedEntry(rel string) bool {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if w.excludedPath(p) {
			return true
		}
	}
	return false
}

func (w *walker) add(rel, abs string) error {
	if err := manifest.ValidatePath(rel); err != nil {
		return &Error{Path: rel, Reason: "unsafe path", Err: err}
	}
	if _, ok := w.seen[rel]; ok {
		return nil
	}
	w.seen[rel] = abs
	w.files = append(w.files, pending{rel: rel, abs: abs})
	return nil
}

func (w *walker) excludedPath(rel string) bool {
	for _, pat := range w.opts.Exclude {
		if ok, _ := path.Match(pat, rel); ok {
			return true
		}
		if ok, _ := path.Match(pat, path.Base(rel)); ok {
			return true
		}
	}
	return false
}

// inside resolves abs's symlinks and checks that the result is inside the
// root.
func (w *walker) inside(rel, abs string) (string, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", &Error{Path: rel, Reason: "broken symlink or unreadable path", Err: err}
	}
	r, err := filepath.Rel(w.root, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", &Error{Path: rel, Reason: fmt.Sprintf("symlink to %s leaves the asset directory %s", real, w.root)}
	}
	return real, nil
}

// dir walks the directory at abs (its real path), whose path in the
// manifest is rel; stack holds the real paths of the directories being
// walked, to refuse symlink cycles.
func (w *walker) dir(ctx context.Context, abs, rel string, stack []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return &Error{Path: orDot(rel), Reason: "cannot read directory", Err: err}
	}
	for _, ent := range ents {
		r := path.Join(rel, ent.Name())
		a := filepath.Join(abs, ent.Name())
		if w.excludedPath(r) {
			w.exclude(r)
			continue
		}
		mode := ent.Type()
		if mode&fs.ModeSymlink != 0 {
			real, err := w.inside(r, a)
			if err != nil {
				return err
			}
			fi, err := os.Stat(real)
			if err != nil {
				return &Error{Path: r, Reason: "cannot stat symlink target", Err: err}
			}
			mode, a = fi.Mode().Type(), real
		}
		switch {
		case mode.IsDir():
			for _, s := range stack {
				if s == a {
					return &Error{Path: r, Reason: "symlink cycle back to " + a}
				}
			}
			if err := w.dir(ctx, a, r, append(stack, a)); err != nil {
				return err
			}
		case mode.IsRegular():
			if err := w.add(r, a); err != nil {
				return err
			}
		default:
			return &Error{Path: r, Reason: fmt.Sprintf("is a special file (%s), not a regular file", mode)}
		}
	}
	return nil
}

// list adds the files an asset list names.
func (w *walker) list(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return &Error{Path: file, Reason: "cannot read the asset list", Err: err}
	}
	l, err := ParseList(data, w.opts.PublicPath, w.opts.CDN)
	if err != nil {
		return &Error{Path: file, Reason: "not a usable asset list", Err: err}
	}
	for _, rel := range l.Paths {
		if err := manifest.ValidatePath(rel); err != nil {
			return &Error{Path: rel, Reason: "unsafe path in " + file, Err: err}
		}
		if w.excludedEntry(rel) {
			w.exclude(rel)
			continue
		}
		real, err := w.inside(rel, filepath.Join(w.root, filepath.FromSlash(rel)))
		if err != nil {
			var ae *Error
			if errors.As(err, &ae) && errors.Is(err, fs.ErrNotExist) {
				ae.Reason = "is named by " + file + " but is not in the asset directory"
				ae.PublicPath = w.publicPathHint(rel)
			}
			return err
		}
		fi, err := os.Stat(real)
		if err != nil {
			return &Error{Path: rel, Reason: "cannot stat", Err: err}
		}
		if !fi.Mode().IsRegular() {
			return &Error{Path: rel, Reason: fmt.Sprintf("is named by %s but is not a regular file (%s)", file, fi.Mode().Type())}
		}
		if err := w.add(rel, real); err != nil {
			return err
		}
	}
	return nil
}

// publicPathHint returns the leading directories of a missing list entry
// without which it is a file of the asset directory, as a prefix
// ("/static/"), or "".
func (w *walker) publicPathHint(rel string) string {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if _, err := os.Stat(filepath.Join(w.root, filepath.FromSlash(strings.Join(parts[:i], "/")))); err == nil {
			return "" // the prefix exists: the file is just missing
		}
		if fi, err := os.Stat(filepath.Join(w.root, filepath.FromSlash(strings.Join(parts[i:], "/")))); err == nil && fi.Mode().IsRegular() {
			return "/" + strings.Join(parts[:i], "/") + "/"
		}
	}
	return ""
}

func orDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// hashAll hashes files on a pool of workers and returns them in order.
// The workers take the next file from a shared index (an atomic counter,
// no channel hand-off per file), so a worker held by a big file leaves
// the small ones to the others; each writes its result in place.
func hashAll(ctx context.Context, files []pending, opts Options) ([]manifest.File, int64, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, max(len(files), 1))
	var total int64
	var sizes chan int64
	if opts.Progress != nil {
		for _, f := range files {
			if fi, err := os.Stat(f.abs); err == nil {
				total += fi.Size()
			}
		}
		sizes = make(chan int64, workers)
	}
	out := make([]manifest.File, len(files))
	var (
		next   atomic.Int64
		failed atomic.Bool
		once   sync.Once
		first  error
		wg     sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() { first = err })
		failed.Store(true)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newReader()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				f, err := hashFile(files[i], r, opts.Inspect)
				if err != nil {
					fail(err)
					return
				}
				out[i] = f
				if sizes != nil {
					sizes <- f.Size
				}
			}
		}()
	}
	if sizes != nil {
		go func() { wg.Wait(); close(sizes) }()
		var done int64
		for n := range sizes {
			done += n
			opts.Progress(done, max(total, done))
		}
	}
	wg.Wait()
	if first != nil {
		return nil, 0, first
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	var sum int64
	for _, f := range out {
		sum += f.Size
	}
	return out, sum, nil
}
