// Command lockstep verifies that a fleet runs exactly the release that was
// shipped. Its commands: docs/reference/.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
	"github.com/lockstep-dev/lockstep/cmd/lockstep/internal/startgc"
)

func main() {
	// A boot gate's check is done within this; a longer command collects
	// as GOGC says from then on.
	startgc.RestoreAfter(250 * time.Millisecond)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.New().RunContext(ctx, os.Args)
	stop()
	os.Exit(app.Exit(err, os.Stderr))
}
