//go:build !unix

package transport

import "net"

// leanSupported is false where idle connections cannot be checked without
// blocking: WithLeanHeads sends every request through net/http.
const leanSupported = false

func idleClean(net.Conn) bool { return false }
