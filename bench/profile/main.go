// Command profile runs lockstep's command line as cmd/lockstep does, with
// a CPU profile of the whole process written to the file PROFILE names:
// the profiles of docs/benchmarks.md.
//
//	go build -o /tmp/lockstep-profile ./bench/profile
//	PROFILE=/tmp/cdn.pprof /tmp/lockstep-profile cdn check --manifest m.json
//	go tool pprof -top /tmp/lockstep-profile /tmp/cdn.pprof
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
)

func main() {
	path := os.Getenv("PROFILE")
	if path == "" {
		fmt.Fprintln(os.Stderr, "profile: set PROFILE to the file to write the CPU profile to")
		os.Exit(2)
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = app.New().RunContext(ctx, os.Args)
	stop()
	pprof.StopCPUProfile()
	if cerr := f.Close(); cerr != nil {
		fmt.Fprintln(os.Stderr, "profile:", cerr)
	}
	os.Exit(app.Exit(err, os.Stderr))
}
