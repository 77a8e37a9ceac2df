package agent

import (
	"flag"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, path string, got []byte) { fleettest.Golden(t, path, got, *update) }
