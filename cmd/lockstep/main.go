// Command lockstep verifies that a fleet runs exactly the release that was
// shipped. Its commands: docs/reference/.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.New().RunContext(ctx, os.Args)
	stop()
	os.Exit(app.Exit(err, os.Stderr))
}
