// Package verify is lockstep's comparison engine: it compares what a
// release manifest says with what the registry, the CDN and the fleet
// actually hold. Its sub-packages each compare one medium: registry
// (tags and digests), cdn (assets) and fleet (instances).
//
// This package holds the error types they share. A *MismatchError means
// "it does not match" (exit 1); an *UnavailableError means "I could not
// check" (exit 3). The two are never confused: a timeout is not a mismatch,
// and a mismatch is never retried into a pass.
package verify
