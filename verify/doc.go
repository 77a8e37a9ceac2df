// Package verify is lockstep's comparison engine: it compares what a
// release manifest says with what the registry, the CDN and the fleet
// actually hold. Its sub-packages each compare one medium: registry
// (tags and digests), cdn (assets) and fleet (instances). The outcomes
// they return (*verdict.MismatchError, *verdict.UnavailableError) are
// package verdict's.
package verify
