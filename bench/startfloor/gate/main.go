// Command gate links what `lockstep admit` links (its packages, no other
// command) and exits: the start of a gate-only build (bench/start.sh
// FLOORS=1).
package main

import (
	"os"

	_ "github.com/lockstep-dev/lockstep/bench/startfloor/admitnosig"
	_ "github.com/lockstep-dev/lockstep/manifest/signature"
	_ "github.com/lockstep-dev/lockstep/verify/imagesig"
)

func main() { os.Exit(0) }
