package assets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHashFileSizes hashes files around the buffer's size, through the
// one-read path, the several-reads path and the whole read for inspect.
func TestHashFileSizes(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 1023, bufSize - 1, bufSize, bufSize + 1, 3*bufSize + 17} {
		for _, inspect := range []bool{false, true} {
			content := bytes.Repeat([]byte{byte(size), 'a', 'b'}, size/3+1)[:size]
			p := filepath.Join(dir, "f.js")
			must(t, os.WriteFile(p, content, 0o644))
			var seen []byte
			var ins func(string, int64) func([]byte)
			if inspect {
				ins = func(_ string, n int64) func([]byte) {
					if n != int64(size) {
						t.Errorf("size %d: inspect asked with size %d", size, n)
					}
					return func(b []byte) { seen = append([]byte(nil), b...) }
				}
			}
			f, err := hashFile(pending{rel: "f.js", abs: p}, newReader(), ins)
			if err != nil {
				t.Fatalf("size %d, inspect %t: %v", size, inspect, err)
			}
			if f.Size != int64(size) || f.SHA256 != sum(string(content)) || f.Path != "f.js" || f.ContentType == "" {
				t.Errorf("size %d, inspect %t: got %+v, want size %d sha256 %s", size, inspect, f, size, sum(string(content)))
			}
			if inspect && !bytes.Equal(seen, content) {
				t.Errorf("size %d: inspect saw %d bytes, want the file's %d", size, len(seen), size)
			}
		}
	}
}

// TestHashFileReusesReader hashes different files with one reader: the
// hash state must not carry over.
func TestHashFileReusesReader(t *testing.T) {
	dir := tree(t, map[string]string{"a": "one", "b": "two", "c": strings.Repeat("3", 2*bufSize)})
	r := newReader()
	for _, name := range []string{"a", "b", "c", "a"} {
		want, _ := os.ReadFile(filepath.Join(dir, name))
		f, err := hashFile(pending{rel: name, abs: filepath.Join(dir, name)}, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.SHA256 != sum(string(want)) {
			t.Errorf("%s: sha256 %s, want %s", name, f.SHA256, sum(string(want)))
		}
	}
}

// TestHashFileChanged changes a file between the fstat that takes its size
// and the reads (inspect is asked in between): each change is an *Error,
// and no entry is returned.
func TestHashFileChanged(t *testing.T) {
	small := strings.Repeat("s", 4096)
	big := strings.Repeat("b", 2*bufSize+5)
	tests := []struct {
		name, content string
		keep          bool // inspect wants the bytes (the graph's read)
		change        func(p string) error
		want          string
	}{
		{"small truncated", small, false, func(p string) error { return os.Truncate(p, 100) }, "100 bytes read, size 4096"},
		{"small truncated, inspected", small, true, func(p string) error { return os.Truncate(p, 0) }, "0 bytes read, size 4096"},
		{"small grew", small, false, appendTo, "grew past its size 4096"},
		{"small grew, inspected", small, true, appendTo, "grew past its size 4096"},
		{"big truncated", big, false, func(p string) error { return os.Truncate(p, bufSize+3) }, "changed while it was hashed"},
		{"big truncated, inspected", big, true, func(p string) error { return os.Truncate(p, bufSize+3) }, "changed while it was hashed"},
		{"big grew", big, false, appendTo, "grew past its size"},
		{"big grew, inspected", big, true, appendTo, "grew past its size"},
		{"big rewritten in place", big, false, func(p string) error {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("X"), bufSize+1); err != nil {
				return err
			}
			future := time.Now().Add(time.Hour)
			return os.Chtimes(p, future, future)
		}, "modified during the read: true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.js")
			must(t, os.WriteFile(p, []byte(tt.content), 0o644))
			used := false
			inspect := func(string, int64) func([]byte) {
				if err := tt.change(p); err != nil {
					t.Fatal(err)
				}
				if !tt.keep {
					return nil
				}
				return func([]byte) { used = true }
			}
			f, err := hashFile(pending{rel: "f.js", abs: p}, newReader(), inspect)
			var ae *Error
			if !errors.As(err, &ae) || ae.Path != "f.js" || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("hashFile = %+v, %v; want an *Error for f.js containing %q", f, err, tt.want)
			}
			if used {
				t.Error("inspect's function was given the bytes of a file that changed")
			}
		})
	}
}

func appendTo(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write([]byte("more"))
	return err
}

// TestHashFileNotRegular: a path that stopped being a regular file since
// the walk (a FIFO, a directory, a symlink) is an *Error; the FIFO does
// not block the open waiting for a writer, and the symlink is not
// followed.
func TestHashFileNotRegular(t *testing.T) {
	dir := tree(t, map[string]string{"target": "outside"})
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o644))
	link := filepath.Join(dir, "link")
	must(t, os.Symlink(filepath.Join(dir, "target"), link))
	tests := []struct {
		abs, want string
		is        error
	}{
		{fifo, "is no longer a regular file", nil},
		{dir, "is no longer a regular file", nil},
		{link, "cannot open", syscall.ELOOP},
		{filepath.Join(dir, "gone"), "cannot open", fs.ErrNotExist},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() {
			_, err := hashFile(pending{rel: "x", abs: tt.abs}, newReader(), nil)
			done <- err
		}()
		select {
		case err := <-done:
			var ae *Error
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Errorf("hashFile(%s) = %v, want an *Error containing %q (is %v)", tt.abs, err, tt.want, tt.is)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("hashFile(%s) blocked", tt.abs)
		}
	}
}

// TestHashUnreadable: a file that cannot be opened or read fails the whole
// Hash with an *Error naming it and keeping the cause, and no Result.
func TestHashUnreadable(t *testing.T) {
	t.Run("permission", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads a file of mode 000")
		}
		dir := tree(t, map[string]string{"a.js": "a", "secret.js": "s"})
		must(t, os.Chmod(filepath.Join(dir, "secret.js"), 0))
		r, err := Hash(context.Background(), Options{Dir: dir})
		var ae *Error
		if r != nil || !errors.As(err, &ae) || ae.Path != "secret.js" || !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("Hash = %v, %v; want an *Error for secret.js that is fs.ErrPermission", r, err)
		}
	})
	t.Run("read fails", func(t *testing.T) {
		// /proc/self/mem is a regular file of size 0 whose read at offset
		// 0 fails (EIO): an open that succeeds and a read that does not.
		const mem = "/proc/self/mem"
		if _, err := os.Stat(mem); err != nil {
			t.Skip(err)
		}
		_, err := hashFile(pending{rel: "mem", abs: mem}, newReader(), nil)
		var ae *Error
		var pe *fs.PathError
		if !errors.As(err, &ae) || ae.Reason != "cannot read" || !errors.As(err, &pe) || pe.Op != "read" {
			t.Fatalf("hashFile(%s) = %v, want an *Error \"cannot read\" wrapping a read *fs.PathError", mem, err)
		}
	})
}

// TestHashFirstErrorStops: one file that changes while it is hashed fails
// Hash (no partial result), with any number of workers; the same tree
// unchanged hashes whole and in order.
func TestHashFirstErrorStops(t *testing.T) {
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%03d.js", i%5, i)] = strings.Repeat("z", i*100+1)
	}
	dir := tree(t, files)
	const bad = "d3/f123.js"
	for _, workers := range []int{1, 2, 8} {
		shrink := func(rel string, _ int64) func([]byte) {
			if rel == bad {
				must(t, os.Truncate(filepath.Join(dir, bad), 1))
			}
			return nil
		}
		r, err := Hash(context.Background(), Options{Dir: dir, Workers: workers, Inspect: shrink})
		var ae *Error
		if r != nil || !errors.As(err, &ae) || ae.Path != bad {
			t.Errorf("workers %d: Hash = %v, %v; want no result and an *Error for %s", workers, r, err, bad)
		}
		must(t, os.WriteFile(filepath.Join(dir, bad), []byte(files[bad]), 0o644))
		r, err = Hash(context.Background(), Options{Dir: dir, Workers: workers})
		if err != nil || len(r.Files) != len(files) {
			t.Fatalf("workers %d: Hash of the repaired tree = %v, %v; want %d files", workers, r, err, len(files))
		}
		for i, f := range r.Files {
			if i > 0 && r.Files[i-1].Path >= f.Path {
				t.Fatalf("workers %d: files out of order at %d: %s, %s", workers, i, r.Files[i-1].Path, f.Path)
			}
			if f.SHA256 != sum(files[f.Path]) {
				t.Errorf("workers %d: %s: sha256 %s, want %s", workers, f.Path, f.SHA256, sum(files[f.Path]))
			}
		}
	}
}

// TestHashCancelled: a cancelled context is Hash's error.
func TestHashCancelled(t *testing.T) {
	dir := tree(t, map[string]string{"a": "a", "b": "b"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r, err := Hash(ctx, Options{Dir: dir}); r != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Hash(cancelled) = %v, %v; want context.Canceled", r, err)
	}
}
