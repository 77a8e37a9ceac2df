package regfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/regfile"
)

// TestRead reads a regular file, and refuses at once what is not one: a
// FIFO with no writer (which a plain open would wait on for ever), a
// directory, a device, a file over the limit, and, with ReadNoFollow, a
// symbolic link.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if b, err := regfile.Read(file, 5); err != nil || string(b) != "12345" {
		t.Errorf("Read(file, 5) = %q, %v; want 12345", b, err)
	}
	if b, err := regfile.Read(link, 5); err != nil || string(b) != "12345" {
		t.Errorf("Read(link, 5) = %q, %v; want 12345 (Read follows links)", b, err)
	}
	if b, err := regfile.Read(empty, 5); err != nil || b == nil || len(b) != 0 {
		t.Errorf("Read(empty) = %#v, %v; want a non-nil empty slice", b, err)
	}
	var tl *regfile.TooLargeError
	if _, err := regfile.Read(file, 4); !errors.As(err, &tl) {
		t.Errorf("Read(file, 4) = %v, want a *TooLargeError", err)
	}
	for _, p := range []string{fifo, dir, "/dev/zero", "/dev/null"} {
		if _, err := regfile.Read(p, 1<<20); !errors.Is(err, regfile.ErrNotRegular) {
			t.Errorf("Read(%s) = %v, want ErrNotRegular", p, err)
		}
	}
	if _, err := regfile.ReadNoFollow(link, 5); !errors.Is(err, regfile.ErrSymlink) {
		t.Errorf("ReadNoFollow(link) = %v, want ErrSymlink", err)
	}
	if _, err := regfile.Read(filepath.Join(dir, "missing"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := regfile.Read(fifo, 5); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Read(fifo) = %v, want an error that names a FIFO", err)
	}
}
