package app

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs up to four of the package's parallel tests at a time (or
// twice GOMAXPROCS, if more), unless -test.parallel says how many: most of
// them wait (on a late server, a kill's delay, a child process, a Docker
// API's timeout), and at go test's default of GOMAXPROCS at a time two
// waiting tests held both slots while the CPU idled (measured: two tests
// at a time for 74 s of the 100 s run, about one core busy).
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(max(4, 2*runtime.GOMAXPROCS(0))))
	}
	os.Exit(m.Run())
}
