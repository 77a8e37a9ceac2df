package startgc

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads GOGC without changing it (under mu, so that the timer
// of RestoreAfter cannot restore between its two calls).
func gcPercent() int {
	mu.Lock()
	defer mu.Unlock()
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestRestoreAfter(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		if p := gcPercent(); p == Percent && os.Getenv("GOGC") != "800" {
			t.Fatalf("GOGC=%s in the environment, yet init set %d", os.Getenv("GOGC"), p)
		}
		t.Skip("GOGC is set in the environment: init left it alone")
	}
	if p := gcPercent(); p != Percent && restore != -1 {
		t.Fatalf("after init GOGC = %d, want %d", p, Percent)
	}
	// Once restored (an earlier run of this test), arm it again as init does.
	mu.Lock()
	if restore == -1 {
		restore = debug.SetGCPercent(Percent)
		if os.Getenv("GOMEMLIMIT") == "" {
			restoreLimit = debug.SetMemoryLimit(Limit)
		}
	}
	mu.Unlock()
	if os.Getenv("GOMEMLIMIT") == "" {
		if l := debug.SetMemoryLimit(-1); l != Limit {
			t.Errorf("while starting the memory limit = %d, want %d", l, Limit)
		}
	}
	RestoreAfter(10 * time.Millisecond)
	if p := gcPercent(); p != Percent {
		t.Fatalf("GOGC = %d at once after RestoreAfter, want %d until the time is up", p, Percent)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC = %d 10 s after RestoreAfter(10ms), want 100 back", gcPercent())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if l := debug.SetMemoryLimit(-1); os.Getenv("GOMEMLIMIT") == "" && l != math.MaxInt64 {
		t.Errorf("after RestoreAfter the memory limit = %d, want none (math.MaxInt64)", l)
	}
	RestoreAfter(0) // twice: nothing left to restore, nothing changes
	time.Sleep(20 * time.Millisecond)
	if p := gcPercent(); p != 100 {
		t.Fatalf("GOGC = %d after a second RestoreAfter, want 100", p)
	}
}
