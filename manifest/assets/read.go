package assets

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/manifest"
)

// openFlags open a file to hash: O_NOFOLLOW because the walk resolved
// every symlink (a file that became one since is refused, not followed out
// of the tree), O_NONBLOCK so that a file that became a FIFO since fails
// the regular-file check instead of blocking the open. On a regular file
// O_NONBLOCK does nothing.
const openFlags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK

// reader is a hashing worker's state, reused from file to file.
type reader struct {
	buf []byte
	h   hash.Hash
}

func newReader() *reader { return &reader{buf: make([]byte, bufSize), h: sha256.New()} }

// hashFile hashes one file and returns its manifest entry. A file that
// fits the worker's buffer costs four system calls (open, fstat, read,
// close): os.Open would add four fcntl and an epoll_ctl for the runtime
// poller, which a regular file does not use. A file whose size changes
// while it is read is an error: one that shrank since the fstat gives
// fewer bytes, one that grew more than its size (each read asks for one
// byte past it), and a file too big for one read is stat'ed again after
// the last, its size and mtime compared. A file that inspect wants is read
// whole and given to it after it is hashed.
func hashFile(p pending, r *reader, inspect func(string, int64) func([]byte)) (manifest.File, error) {
	buf, h := r.buf, r.h
	h.Reset()
	fd, err := retry(func() (int, error) { return unix.Open(p.abs, openFlags, 0) })
	if err != nil {
		return manifest.File{}, &Error{Path: p.rel, Reason: "cannot open", Err: &fs.PathError{Op: "open", Path: p.abs, Err: err}}
	}
	defer unix.Close(fd)
	var before unix.Stat_t
	if err := fstat(fd, &before); err != nil {
		return manifest.File{}, &Error{Path: p.rel, Reason: "cannot stat", Err: &fs.PathError{Op: "fstat", Path: p.abs, Err: err}}
	}
	if before.Mode&unix.S_IFMT != unix.S_IFREG {
		return manifest.File{}, &Error{Path: p.rel, Reason: "is no longer a regular file"}
	}
	size := before.Size
	var use func([]byte)
	if inspect != nil {
		use = inspect(p.rel, size)
	}
	var (
		data    []byte // the file's bytes, for use
		n       int64  // bytes hashed
		recheck bool   // stat again after hashing
	)
	switch {
	case size < int64(len(buf)) || use != nil:
		// One read of size+1 bytes: a file that grew since the fstat gives
		// more than size, one that shrank fewer. A file for use that does
		// not fit buf is read into a slice of its own.
		b := buf
		if size >= int64(len(buf)) {
			b, recheck = make([]byte, size+1), true
		}
		k, err := readFull(fd, b[:size+1])
		if err != nil {
			return manifest.File{}, readError(p, err)
		}
		data, n = b[:k], int64(k)
		h.Write(data)
	default:
		// Several reads through buf, and a second fstat to see that the
		// file did not change between them.
		recheck = true
		if n, err = readHash(fd, size, h, buf); err != nil {
			return manifest.File{}, readError(p, err)
		}
	}
	if n != size {
		return manifest.File{}, changed(p, n, size)
	}
	if recheck {
		var after unix.Stat_t
		if err := fstat(fd, &after); err != nil {
			return manifest.File{}, &Error{Path: p.rel, Reason: "cannot stat", Err: &fs.PathError{Op: "fstat", Path: p.abs, Err: err}}
		}
		if after.Size != size || after.Mtim != before.Mtim {
			return manifest.File{}, &Error{Path: p.rel, Reason: fmt.Sprintf("changed while it was hashed (size %d, then %d; modified during the read: %t)", size, after.Size, after.Mtim != before.Mtim)}
		}
	}
	if use != nil {
		use(data)
	}
	return manifest.File{
		Path:        p.rel,
		Size:        n,
		SHA256:      hex.EncodeToString(h.Sum(nil)),
		ContentType: ContentType(p.rel),
	}, nil
}

func readError(p pending, err error) error {
	return &Error{Path: p.rel, Reason: "cannot read", Err: &fs.PathError{Op: "read", Path: p.abs, Err: err}}
}

func changed(p pending, n, size int64) error {
	if n > size {
		return &Error{Path: p.rel, Reason: fmt.Sprintf("changed while it was hashed (grew past its size %d)", size)}
	}
	return &Error{Path: p.rel, Reason: fmt.Sprintf("changed while it was hashed (%d bytes read, size %d)", n, size)}
}

// readHash reads and hashes size+1 bytes at most through buf. It returns
// the bytes read: more than size for a file that grew.
func readHash(fd int, size int64, h hash.Hash, buf []byte) (int64, error) {
	var n int64
	for n <= size {
		want := min(int64(len(buf)), size+1-n)
		k, err := retry(func() (int, error) { return unix.Read(fd, buf[:want]) })
		if err != nil {
			return n, err
		}
		if k == 0 {
			break
		}
		h.Write(buf[:k])
		n += int64(k)
	}
	return n, nil
}

// readFull reads into b until it is full or the file ends.
func readFull(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := retry(func() (int, error) { return unix.Read(fd, b[n:]) })
		if err != nil {
			return n, err
		}
		if k == 0 {
			break
		}
		n += k
		if n < len(b) && n >= len(b)-1 {
			break // the whole size is read; asking again would cost a read that sees EOF
		}
	}
	return n, nil
}

func fstat(fd int, st *unix.Stat_t) error {
	_, err := retry(func() (int, error) { return 0, unix.Fstat(fd, st) })
	return err
}

// retry calls f again while it is interrupted by a signal (EINTR).
func retry(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}
