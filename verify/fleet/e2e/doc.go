// Package e2e holds the fleet's end-to-end test: real `lockstep agent`
// processes on loopback ports, each reading its running digest from a fake
// Docker daemon and probing a page it serves, and `lockstep fleet check` over them. It has no code of
// its own.
package e2e
