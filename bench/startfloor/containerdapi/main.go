// Command containerdapi links the containerd gRPC API stubs that
// admission/running's containerd source calls (containers, tasks, images,
// snapshots, content) and exits: what replaced containerd's Go client
// (floor-containerd) in the gate's start (bench/start.sh FLOORS=1).
package main

import (
	"os"

	_ "github.com/containerd/containerd/api/services/containers/v1"
	_ "github.com/containerd/containerd/api/services/content/v1"
	_ "github.com/containerd/containerd/api/services/images/v1"
	_ "github.com/containerd/containerd/api/services/snapshots/v1"
	_ "github.com/containerd/containerd/api/services/tasks/v1"
	_ "google.golang.org/grpc"
)

func main() { os.Exit(0) }
