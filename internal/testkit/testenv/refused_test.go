package testenv

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestRefusedAddr: the address refuses connections, and no listener can
// be bound to it while the test runs.
func TestRefusedAddr(t *testing.T) {
	addr := RefusedAddr(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("dialling %s succeeded", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dialling %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Errorf("another listener took %s", addr)
	}
}
