package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
)

// Format is a kind of file Rewrite understands.
type Format string

// The formats.
const (
	// YAML is Kubernetes manifests and docker-compose files, told apart
	// document by document.
	YAML       Format = "yaml"
	ECS        Format = "ecs"
	Dockerfile Format = "dockerfile"
)

// Func returns the pinned form of an image reference found in a file, and
// false to leave the reference as it is.
type Func func(ref string) (string, bool)

// Change is one reference rewritten.
type Change struct {
	// Line is 1-based.
	Line int    `json:"line"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// ParseError says that a file does not parse, or is of no known format.
// It is an input error; the file was not changed.
type ParseError struct {
	Path   string
	Format Format
	// Line is 1-based, 0 when unknown.
	Line int
	Err  error
}

func (e *ParseError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	if e.Format == "" {
		return fmt.Sprintf("%s: %v", where, e.Err)
	}
	return fmt.Sprintf("%s: not a valid %s file: %v", where, e.Format, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// InvalidInput reports that this is an input error (exit 2).
func (e *ParseError) InvalidInput() bool { return true }

// ref is one image reference found in a file: its value and the byte span
// [start, end) of its source text, quotes included.
type ref struct {
	value      string
	start, end int
	line       int
	quote      byte // 0, '"' or '\''
}

// File is a parsed file, ready to rewrite.
type File struct {
	Path   string
	Format Format
	data   []byte
	refs   []ref
}

// DetectFormat names the format of path by its name: Dockerfile,
// Containerfile, Dockerfile.*, *.Dockerfile are Dockerfiles; *.json ECS
// task definitions; *.yaml and *.yml Kubernetes or compose.
func DetectFormat(path string) (Format, error) {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case base == "dockerfile" || base == "containerfile" ||
		strings.HasPrefix(base, "dockerfile.") || strings.HasPrefix(base, "containerfile.") ||
		strings.HasSuffix(base, ".dockerfile") || strings.HasSuffix(base, ".containerfile"):
		return Dockerfile, nil
	case strings.HasSuffix(base, ".json"):
		return ECS, nil
	case strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml"):
		return YAML, nil
	}
	return "", fmt.Errorf("unknown format: want a .yaml or .yml (Kubernetes, compose), a .json (ECS task definition) or a Dockerfile")
}

// Load reads and parses every path, before anything is written. The first
// file that cannot be read or parsed is the error (a *ParseError when it
// does not parse).
func Load(paths ...string) ([]*File, error) {
	var out []*File
	for _, p := range paths {
		f, err := load(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func load(path string) (*File, error) {
	format, err := DetectFormat(path)
	if err != nil {
		return nil, &ParseError{Path: path, Err: err}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return Parse(path, format, data)
}

// Parse finds the image references in data, a file of the format.
func Parse(path string, format Format, data []byte) (*File, error) {
	var refs []ref
	var err error
	switch format {
	case YAML:
		refs, err = yamlRefs(data)
	case ECS:
		refs, err = ecsRefs(data)
	case Dockerfile:
		refs, err = dockerfileRefs(data)
	default:
		err = fmt.Errorf("unknown format %q", format)
	}
	if err != nil {
		pe := &ParseError{Path: path, Format: format, Err: err}
		var le *lineError
		if errors.As(err, &le) {
			pe.Line, pe.Err = le.line, le.err
		}
		return nil, pe
	}
	// In source order, each span once (a YAML alias can reach one node
	// twice), so that edits splice in order.
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].start < refs[j].start })
	uniq := refs[:0]
	for i, r := range refs {
		if i == 0 || r.start != refs[i-1].start {
			uniq = append(uniq, r)
		}
	}
	return &File{Path: path, Format: format, data: data, refs: uniq}, nil
}

// Refs returns the image references in the file, in order, each once.
func (f *File) Refs() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range f.refs {
		if !seen[r.value] {
			seen[r.value] = true
			out = append(out, r.value)
		}
	}
	return out
}

// Rewrite returns the file's bytes with every reference that pin accepts
// replaced, and the changes. References pin returns unchanged are no
// change. The result is parsed again and checked before it is returned.
func (f *File) Rewrite(pin Func) ([]byte, []Change, error) {
	var changes []Change
	var edits []ref
	var news []string
	for _, r := range f.refs {
		n, ok := pin(r.value)
		if !ok || n == r.value {
			continue
		}
		edits = append(edits, r)
		news = append(news, n)
		changes = append(changes, Change{Line: r.line, Old: r.value, New: n})
	}
	if len(edits) == 0 {
		return f.data, nil, nil
	}
	var b bytes.Buffer
	last := 0
	for i, r := range edits {
		b.Write(f.data[last:r.start])
		b.WriteString(quote(news[i], r.quote, f.Format))
		last = r.end
	}
	b.Write(f.data[last:])
	out := b.Bytes()
	// The edit must change the references and nothing else.
	again, err := Parse(f.Path, f.Format, out)
	if err != nil {
		return nil, nil, fmt.Errorf("rewriting %s produced a file that does not parse: %w", f.Path, err)
	}
	if len(again.refs) != len(f.refs) {
		return nil, nil, fmt.Errorf("rewriting %s: %d references before, %d after", f.Path, len(f.refs), len(again.refs))
	}
	want := map[int]string{}
	for i, r := range edits {
		want[r.start] = news[i]
	}
	for i, r := range f.refs {
		v := r.value
		if n, ok := want[r.start]; ok {
			v = n
		}
		if again.refs[i].value != v {
			return nil, nil, fmt.Errorf("rewriting %s: reference %d is %q, want %q", f.Path, i, again.refs[i].value, v)
		}
	}
	return out, changes, nil
}

func quote(s string, q byte, format Format) string {
	switch {
	case format == ECS:
		var b bytes.Buffer
		enc := jsonEncoder(&b)
		enc.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	case q == '"':
		return doubleQuote(s)
	case q == '\'':
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}

// Result is what Write did to one file.
type Result struct {
	Path    string   `json:"path"`
	Format  Format   `json:"format"`
	Changes []Change `json:"changes"`
}

// Write rewrites every file with pin, atomically, and returns what it did
// in the order of files. Every file is rewritten in memory first; a file
// without changes is not written.
func Write(files []*File, pin Func) ([]Result, error) {
	outs := make([][]byte, len(files))
	res := make([]Result, len(files))
	for i, f := range files {
		out, changes, err := f.Rewrite(pin)
		if err != nil {
			return nil, err
		}
		if changes == nil {
			changes = []Change{}
		}
		outs[i], res[i] = out, Result{Path: f.Path, Format: f.Format, Changes: changes}
	}
	for i, f := range files {
		if len(res[i].Changes) == 0 {
			continue
		}
		// Write through a symbolic link, not over it.
		target, err := filepath.EvalSymlinks(f.Path)
		if err != nil {
			return res[:i], fmt.Errorf("writing %s: %w", f.Path, err)
		}
		if err := atomicfile.Write(target, outs[i], 0o644); err != nil {
			return res[:i], err
		}
	}
	return res, nil
}

// lineError carries the line of a parse error.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }
