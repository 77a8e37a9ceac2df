// Package e2e holds the fleet's end-to-end test: real `lockstep agent`
// processes on loopback ports, each checking a fake running digest and a
// page it serves, and `lockstep fleet check` over them. It has no code of
// its own.
package e2e
