// Package atomicfile writes files so that a reader sees the old content or
// the new, never a part: a temporary file in the same directory, fsync,
// rename, fsync of the directory.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data atomically. On error, path is untouched and
// no temporary file is left behind. perm applies to a new file; an existing
// file keeps its mode.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteAll(filepath.Dir(path), File{Name: filepath.Base(path), Data: data, Perm: perm})
}

// File is one file of WriteAll: its name in the directory, its content
// and the mode of a new file (an existing file keeps its own).
type File struct {
	Name string
	Data []byte
	Perm os.FileMode
}

// WriteAll replaces the files of dir atomically each, with one fsync of
// the directory for them all: each is written to a temporary file in dir
// and fsynced, then all are renamed, in order, then the directory is
// fsynced once. When WriteAll returns nil every file is durable. On an
// error before the first rename no file is touched and no temporary file
// is left behind; a rename that fails leaves the files before it replaced
// and those after it untouched (each still old or new, never a part), so a
// caller that needs an order of commits lists its commit point last.
func WriteAll(dir string, files ...File) (err error) {
	tmps := make([]string, 0, len(files))
	defer func() {
		if err != nil {
			for _, t := range tmps {
				os.Remove(t)
			}
		}
	}()
	for _, f := range files {
		tmp, err := writeTemp(dir, f)
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], filepath.Join(dir, f.Name)); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.Name), err)
		}
		tmps[i] = "" // renamed: nothing to remove
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// writeTemp writes f's content to a new temporary file in dir, with f's
// mode (or the existing file's), fsynced and closed, and returns its path;
// on error it leaves nothing behind.
func writeTemp(dir string, f File) (tmp string, err error) {
	path := filepath.Join(dir, f.Name)
	perm := f.Perm
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	t, err := os.CreateTemp(dir, "."+f.Name+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			t.Close()
			os.Remove(t.Name())
		}
	}()
	if _, err = t.Write(f.Data); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err = t.Chmod(perm); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err = t.Sync(); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err = t.Close(); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return t.Name(), nil
}
