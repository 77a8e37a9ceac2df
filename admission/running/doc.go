// Package running observes which image a container runtime is actually
// running: the producer side of the boot gate's image check.
//
// Each backend implements [Source]: the Docker Engine API through Docker's
// own client library ([Docker]), containerd through its own client
// ([Containerd]), the Kubernetes Container Runtime Interface ([CRI]), the
// ECS task metadata endpoint v4 ([ECS]), a file written by a launch script
// ([File]) and a digest given explicitly ([Given]). [Parse] turns the
// `--running` spec of the CLI into one. The runtimes' APIs have no
// authentication: Docker's is reached on a unix socket or a loopback tcp
// address, containerd's and CRI's on a unix socket only.
//
// A source reports what the runtime says, never a judgement: the digests
// it could parse (canonical "sha256:" + 64 lower-case hex digits) and,
// apart, every value that is not such a digest (a tag, "sha256:ABC"). The
// admission package decides what matches.
package running
