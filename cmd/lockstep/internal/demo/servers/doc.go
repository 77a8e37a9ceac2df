// Package servers runs the servers of `lockstep demo` on loopback: an
// in-memory OCI distribution registry and plain HTTP servers (the CDN, an
// instance's page). Only the demo imports it. It is written for the demo
// and imports no test machinery (no testing, no net/http/httptest, none
// of the tests' fakes), so that the binary that boots instances links
// nothing of the tests; the tests use go-containerregistry's registry
// through internal/testkit/memregistry.
package servers
