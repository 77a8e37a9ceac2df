//go:build !linux

package transport

// readsRootFiles: elsewhere Go's system roots are the platform's
// verifier or a list of its own; SystemRoots leaves them to Go.
const readsRootFiles = false

func rootFiles() [][]byte { return nil }
