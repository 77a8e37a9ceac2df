package assets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// tree writes files (path -> content) under a new directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func paths(r *Result) []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.Path)
	}
	return out
}

func TestHashTree(t *testing.T) {
	files := map[string]string{
		"index.html":               "<html></html>",
		"assets/app-1a2b.js":       "console.log(1)",
		"assets/app-1a2b.js.map":   "{}",
		"assets/app.css":           "body{}",
		"assets/font.woff2":        "wOF2",
		"a.b/c":                    "",
		".well-known/security.txt": "Contact: x",
		"big.bin":                  strings.Repeat("x", 3*bufSize+17),
	}
	dir := tree(t, files)
	var last, lastTotal int64
	calls := 0
	r, err := Hash(context.Background(), Options{Dir: dir, Progress: func(done, total int64) { calls++; last, lastTotal = done, total }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".well-known/security.txt", "a.b/c", "assets/app-1a2b.js", "assets/app-1a2b.js.map", "assets/app.css", "assets/font.woff2", "big.bin", "index.html"}
	if got := paths(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("Hash paths = %q, want %q (sorted, hidden files included)", got, want)
	}
	var total int64
	for _, f := range r.Files {
		if f.SHA256 != sum(files[f.Path]) || f.Size != int64(len(files[f.Path])) {
			t.Errorf("%s: sha256 %s size %d, want %s size %d", f.Path, f.SHA256, f.Size, sum(files[f.Path]), len(files[f.Path]))
		}
		total += f.Size
	}
	if r.Bytes != total {
		t.Errorf("Bytes = %d, want %d", r.Bytes, total)
	}
	if calls != len(files) || last != total || lastTotal != total {
		t.Errorf("Progress: %d calls ending at %d/%d, want %d calls ending at %d/%d", calls, last, lastTotal, len(files), total, total)
	}
	types := map[string]string{"assets/app-1a2b.js": "text/javascript; charset=utf-8", "assets/app-1a2b.js.map": "application/json",
		"assets/font.woff2": "font/woff2", "index.html": "text/html; charset=utf-8", "a.b/c": ""}
	for _, f := range r.Files {
		if want, ok := types[f.Path]; ok && f.ContentType != want {
			t.Errorf("%s: content type %q, want %q", f.Path, f.ContentType, want)
		}
	}
	for _, workers := range []int{1, 3, 16} {
		r2, err := Hash(context.Background(), Options{Dir: dir, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r2.Files, r.Files) {
			t.Errorf("Hash with %d workers differs from the default", workers)
		}
	}
}

func TestHashSymlinksInside(t *testing.T) {
	dir := tree(t, map[string]string{"real/app.js": "js", "x.txt": "x"})
	must(t, os.Symlink("real/app.js", filepath.Join(dir, "alias.js")))
	must(t, os.Symlink("real", filepath.Join(dir, "linked")))
	r, err := Hash(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"alias.js", "linked/app.js", "real/app.js", "x.txt"}
	if got := paths(r); !reflect.DeepEqual(got, want) {
		t.Errorf("Hash paths = %q, want %q (symlinks inside the directory are followed)", got, want)
	}
	if r.Files[0].SHA256 != sum("js") {
		t.Errorf("alias.js hashed to %s, want the target's %s", r.Files[0].SHA256, sum("js"))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestHashRefuses(t *testing.T) {
	outside := tree(t, map[string]string{"secret": "s", "d/f": "f"})
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		path  string
	}{
		{"symlink to a file outside", func(t *testing.T, dir string) {
			must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "s")))
		}, "s"},
		{"relative symlink escaping", func(t *testing.T, dir string) {
			must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
			must(t, os.Symlink("../../../../../../../../etc/hostname", filepath.Join(dir, "sub", "h")))
		}, "sub/h"},
		{"symlink to a directory outside", func(t *testing.T, dir string) {
			must(t, os.Symlink(filepath.Join(outside, "d"), filepath.Join(dir, "d")))
		}, "d"},
		{"broken symlink", func(t *testing.T, dir string) {
			must(t, os.Symlink("nowhere", filepath.Join(dir, "b")))
		}, "b"},
		{"symlink cycle", func(t *testing.T, dir string) {
			must(t, os.MkdirAll(filepath.Join(dir, "loop"), 0o755))
			must(t, os.Symlink("..", filepath.Join(dir, "loop", "up")))
		}, "loop/up"},
		{"named pipe", func(t *testing.T, dir string) {
			must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
		}, "fifo"},
		{"backslash in a name", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, `a\b.js`), nil, 0o644))
		}, `a\b.js`},
		{"control character in a name", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "a\tb.js"), nil, 0o644))
		}, "a\tb.js"},
		{"non-NFC name", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "cafe\u0301.txt"), nil, 0o644))
		}, "cafe\u0301.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"ok.js": "ok"})
			tt.setup(t, dir)
			r, err := Hash(context.Background(), Options{Dir: dir})
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("Hash = %v, %v; want an *Error", r, err)
			}
			if ae.Path != tt.path {
				t.Errorf("Hash error names %q, want %q (%v)", ae.Path, tt.path, err)
			}
		})
	}
}

func TestHashExclude(t *testing.T) {
	dir := tree(t, map[string]string{"app.js": "a", ".DS_Store": "x", ".git/HEAD": "h", "img/.DS_Store": "y", "img/a.png": "p"})
	r, err := Hash(context.Background(), Options{Dir: dir, Exclude: []string{".DS_Store", ".git"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(r), []string{"app.js", "img/a.png"}; !reflect.DeepEqual(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	if want := []string{".DS_Store", ".git", "img/.DS_Store"}; !reflect.DeepEqual(r.Excluded, want) {
		t.Errorf("Excluded = %q, want %q", r.Excluded, want)
	}
}

func TestHashNotADirectory(t *testing.T) {
	dir := tree(t, map[string]string{"f": "x"})
	for _, d := range []string{"", filepath.Join(dir, "f"), filepath.Join(dir, "missing")} {
		if _, err := Hash(context.Background(), Options{Dir: d}); !errors.As(err, new(*Error)) {
			t.Errorf("Hash(Dir %q) = %v, want an *Error", d, err)
		}
	}
}

func TestHashCanceled(t *testing.T) {
	dir := tree(t, map[string]string{"a": "a", "b": "b"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Hash(ctx, Options{Dir: dir}); !errors.Is(err, context.Canceled) {
		t.Errorf("Hash with a canceled context = %v, want context.Canceled", err)
	}
}

func TestContentType(t *testing.T) {
	for p, want := range map[string]string{
		"a.js": "text/javascript; charset=utf-8", "a.MJS": "text/javascript; charset=utf-8", "a.css": "text/css; charset=utf-8",
		"a.js.map": "application/json", "f.woff2": "font/woff2", "m.wasm": "application/wasm", "README": "", "x.unknownext": "",
	} {
		if got := ContentType(p); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", p, got, want)
		}
	}
}
