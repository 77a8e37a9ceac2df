// Package regfile is the one way lockstep reads a file it is handed or
// keeps: a store's pointers, manifests, signatures and bundles, a signing
// key, a fleet report. A read is bounded, and only a regular file is read:
// the file is opened with O_NONBLOCK, so that a FIFO, a device or a socket
// never blocks the open, and checked with fstat before a byte is read, so
// that it is an error at once. Read follows symbolic links (a file an
// operator names); ReadNoFollow refuses one as the last path element (a
// file inside a store, so that every command sees the same layout).
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped (in a *fs.PathError) for a path that is not a
// regular file: a directory, FIFO, device or socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrSymlink is wrapped (in a *fs.PathError) by ReadNoFollow for a path
// that is a symbolic link.
var ErrSymlink = errors.New("a symbolic link, which is not followed here")

// TooLargeError says that a file holds more than the limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is over the %d byte limit", e.Path, e.Limit)
}

// Read returns the content of the regular file at path, following
// symbolic links, or an error: fs.ErrNotExist (wrapped) for a file that is
// not there, ErrNotRegular, or a *TooLargeError past limit bytes. The
// bytes of an existing empty file are a non-nil, empty slice.
func Read(path string, limit int64) ([]byte, error) {
	return read(path, limit, 0)
}

// ReadNoFollow is Read, refusing a symbolic link as the last element of
// path with ErrSymlink.
func ReadNoFollow(path string, limit int64) ([]byte, error) {
	return read(path, limit, syscall.O_NOFOLLOW)
}

func read(path string, limit int64, flags int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|flags, 0)
	if err != nil {
		if flags&syscall.O_NOFOLLOW != 0 && errors.Is(err, syscall.ELOOP) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(fi.Mode()))}
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	b := make([]byte, 0, min(fi.Size(), limit)+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, &TooLargeError{Path: path, Limit: limit}
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}
