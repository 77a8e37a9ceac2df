// Package atomicfile writes files so that a reader sees the old content or
// the new, never a part: a temporary file in the same directory, fsync,
// rename, fsync of the directory.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	var held []*os.File
	defer func() {
		if err != nil {
			for _, t := range tmps {
				if t != "" {
					os.Remove(t)
				}
			}
		}
		// Closing releases each temporary file's lock, after its rename.
		for _, h := range held {
			h.Close()
		}
	}()
	for _, f := range files {
		tmp, h, err := writeTemp(dir, f)
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp)
		held = append(held, h)
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
// mode (or the existing file's), fsynced, and returns its path and the
// open file, which holds the file's lock (see CreateTemp) until the
// caller closes it; on error it leaves nothing behind.
func writeTemp(dir string, f File) (tmp string, held *os.File, err error) {
	path := filepath.Join(dir, f.Name)
	perm := f.Perm
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	t, err := CreateTemp(dir, f.Name)
	if err != nil {
		return "", nil, fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			t.Close()
			os.Remove(t.Name())
		}
	}()
	if _, err = t.Write(f.Data); err != nil {
		return "", nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = t.Chmod(perm); err != nil {
		return "", nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = t.Sync(); err != nil {
		return "", nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return t.Name(), t, nil
}

// TempMarker is in the name of every temporary file: DIR/.NAME.tmp-RANDOM.
const TempMarker = ".tmp-"

// CreateTemp creates the temporary file of name in dir (.NAME.tmp-*) and
// takes an exclusive flock(2) on it, held until the file is closed: a
// writer killed with SIGKILL loses its lock with its process, and Sweep
// removes what it left.
//
// Between the file's creation and its lock a Sweep would find it unlocked
// and take it. CreateTemp holds a shared lock on dir itself for that
// instant and Sweep an exclusive one while it looks (lockDir), so the two
// never meet. Where the filesystem refuses a lock on a directory, a file
// swept or locked by a Sweep in that instant is noticed (no link left, or
// its lock taken) and created again.
func CreateTemp(dir, name string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		t, err := createLocked(dir, name)
		if err == nil {
			return t, nil
		}
		if attempt == 3 {
			return nil, fmt.Errorf("creating a temporary file in %s: %w", dir, err)
		}
	}
}

// createLocked is one attempt of CreateTemp.
func createLocked(dir, name string) (*os.File, error) {
	defer lockDir(dir, syscall.LOCK_SH)()
	t, err := os.CreateTemp(dir, "."+name+TempMarker+"*")
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(t.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Close()
		os.Remove(t.Name()) // a Sweep holds its lock, and will find it gone
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(t.Fd()), &st); err != nil || st.Nlink == 0 {
		t.Close() // its name is gone: nothing to remove
		if err == nil {
			err = errors.New("swept while being created")
		}
		return nil, err
	}
	return t, nil
}

// lockDir takes a flock(2) of kind how on dir itself and returns what
// releases it. A directory that cannot be opened or locked (a filesystem
// without flock on directories) is not locked: the caller goes on without.
// A process killed while it holds the lock loses it with its process.
func lockDir(dir string, how int) (unlock func()) {
	d, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	for {
		err = syscall.Flock(int(d.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		d.Close()
		return func() {}
	}
	return func() { d.Close() } // closing releases the lock
}

// Sweep removes the temporary files of dir (.NAME.tmp-*) whose writer is
// gone: a file whose lock it can take (its writer was killed, or crashed,
// before renaming it) is removed; one whose writer is alive is left. It
// returns the names removed; a directory that is not there has none.
func Sweep(dir string) ([]string, error) {
	// No CreateTemp is between its file's creation and its lock while
	// Sweep holds dir (see CreateTemp).
	defer lockDir(dir, syscall.LOCK_EX)()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, ".") || !strings.Contains(n, TempMarker) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, n)
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue // gone meanwhile, or not ours to open
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			var st syscall.Stat_t
			fi, lerr := os.Lstat(p)
			if syscall.Fstat(int(f.Fd()), &st) == nil && lerr == nil {
				if ls, ok := fi.Sys().(*syscall.Stat_t); ok && ls.Ino == st.Ino && ls.Dev == st.Dev && os.Remove(p) == nil {
					out = append(out, n)
				}
			}
		}
		f.Close()
	}
	return out, nil
}
