// Package record builds a release manifest: it pins every image of the
// release by digest (with verify/registry), hashes every static asset the
// release serves (with manifest/assets), fills in where the release was
// built from the CI environment, and returns a manifest that validates.
//
// [Manifest] is the whole of `lockstep record`; the command only parses
// flags and writes the result.
package record
