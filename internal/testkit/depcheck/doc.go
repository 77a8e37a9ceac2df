// Package depcheck is the test helper that guards what a package may link:
// the boot path's weight (no CLI framework, no cosign CLI, no Kubernetes),
// the layers of the tree (nothing under manifest/ imports verify), the
// floors of the tree (no import runs up a floor: TestFloors) and the binary
// (no test-kit package in cmd/lockstep). It is go-containerregistry's
// internal/depcheck idea written over `go list -deps`, so it adds no dependency.
//
// A Rule names packages by `go list` pattern and the dependencies they must
// not have, direct or transitive; Assert fails a test with the chain of
// imports that leads to each denied dependency. Floors name a tree's floors
// by path, lowest first, and who may import each; Floors.Check returns each
// import of a non-test file that runs up a floor or into a floor that its
// importer may not use, naming the importer and the import.
package depcheck
