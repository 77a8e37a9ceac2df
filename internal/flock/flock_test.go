package flock_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/flock"
)

// TestLock: a second Lock waits for the first, and gives up when its
// context is done instead of blocking.
func TestLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	unlock, err := flock.Lock(context.Background(), p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := flock.Lock(ctx, p, 0o600); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock while held = %v, want context.DeadlineExceeded", err)
	}
	unlock()
	unlock2, err := flock.Lock(context.Background(), p, 0o600)
	if err != nil {
		t.Fatalf("Lock after unlock = %v", err)
	}
	unlock2()
}
