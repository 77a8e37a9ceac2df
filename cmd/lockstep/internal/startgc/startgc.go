// Package startgc keeps the garbage collector from running while
// lockstep starts: the packages it links allocate about 7 MB in their
// init functions, which with the default GOGC=100 and its 4 MB minimum
// heap cost two collections before main starts, and a boot gate's check
// then allocates a few more (the GC's workers were 16% of `lockstep
// admit`'s CPU, bench/perf.sh admit). Its init sets GOGC to Percent; it
// runs about halfway through package initialisation (Go initialises the
// ready packages in the order of their import paths, and this one sorts
// after most of the third-party ones), so the first collection, when it
// comes earlier, still happens. main calls RestoreAfter: a command done
// within that time (admit, version, a CI step) never collects again; a
// longer one (the agent, the webhook, fleet check) gets GOGC back, as the
// environment set it, after that time. Meanwhile a soft memory limit of
// Limit bounds what the heap may grow to (a command that allocates fast
// in its first moments still collects). With GOGC set in the environment
// nothing changes; with GOMEMLIMIT set, no limit is set.
package startgc

import (
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// Percent is the GOGC of a starting process.
const Percent = 800

// Limit is the soft memory limit of a starting process, in bytes.
const Limit = 128 << 20

var (
	mu           sync.Mutex
	restore      = -1 // the GOGC to put back; -1: nothing to put back
	restoreLimit = int64(-1)
)

func init() {
	if os.Getenv("GOGC") != "" {
		return // the environment decides, during start-up too
	}
	restore = debug.SetGCPercent(Percent)
	if os.Getenv("GOMEMLIMIT") == "" {
		restoreLimit = debug.SetMemoryLimit(Limit)
	}
}

// RestoreAfter puts back the GOGC of before init after d, if init changed
// it. Setting it at once would collect at once: the heap init left is
// above the default goal.
func RestoreAfter(d time.Duration) {
	time.AfterFunc(d, func() {
		mu.Lock()
		defer mu.Unlock()
		if restore != -1 {
			debug.SetGCPercent(restore)
			restore = -1
		}
		if restoreLimit != -1 {
			debug.SetMemoryLimit(restoreLimit)
			restoreLimit = -1
		}
	})
}
