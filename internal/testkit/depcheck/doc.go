// Package depcheck is the test helper that guards what a package may link:
// the boot path's weight (no CLI framework, no cosign CLI, no Kubernetes),
// the layers of the tree (nothing under manifest/ imports verify) and the
// binary (no test-support package in cmd/lockstep). It is go-containerregistry's
// internal/depcheck idea written over `go list -deps`, so it adds no dependency.
//
// A Rule names packages by `go list` pattern and the dependencies they must
// not have, direct or transitive; Assert fails a test with the chain of
// imports that leads to each denied dependency.
package depcheck
