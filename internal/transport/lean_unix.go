//go:build unix

package transport

import (
	"net"
	"syscall"
)

// leanSupported says whether idle connections can be checked (idleClean).
const leanSupported = true

// idleClean reports whether an idle connection is fit for the next
// request: nothing arrived on it since its last response (a response
// nobody asked for, which would answer the next request) and the server
// has not closed it. It peeks without blocking: one recvfrom.
func idleClean(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	clean := false
	var b [1]byte
	if err := raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		clean = n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true // never wait: done either way
	}); err != nil {
		return false
	}
	return clean
}
