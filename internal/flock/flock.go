// Package flock takes an exclusive flock(2) on a lock file, polling so
// that the wait honours a context (SIGINT, SIGTERM, a deadline) instead of
// blocking in the kernel.
package flock

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// Lock creates path (with perm) if needed and takes its exclusive lock,
// retrying with a backoff from 100 µs to 20 ms until ctx is done. It
// returns the function that releases the lock.
func Lock(ctx context.Context, path string, perm os.FileMode) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return nil, err
	}
	wait := 100 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 20*time.Millisecond)
	}
}
