// Command gatenosig links what `lockstep admit` links but its signature
// verification (manifest/signature, verify/imagesig: cosign) and exits: the
// start of a gate-only build without cosign (bench/start.sh FLOORS=1).
package main

import (
	"os"

	_ "github.com/lockstep-dev/lockstep/bench/startfloor/admitnosig"
)

func main() { os.Exit(0) }
