// Command containerd links containerd's Go client alone (what
// admission/running's containerd source uses) and exits: its share of the
// gate's start (bench/start.sh FLOORS=1).
package main

import (
	"os"

	_ "github.com/containerd/containerd/v2/client"
)

func main() { os.Exit(0) }
