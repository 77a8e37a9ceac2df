// Package manifest defines lockstep's release manifest: the one document that
// binds a release's images, pinned by digest, to every static asset the
// release serves, by hash.
//
// The format is versioned (apiVersion lockstep.dev/v1, kind ReleaseManifest)
// and decoded strictly by [Parse]: unknown fields, duplicate keys, trailing
// data, documents larger than [MaxSize], non-canonical digests and unsafe
// asset paths are errors of type [*ValidationError] that name the field.
// It reads a document in one pass with encoding/json/v2's rules (case-
// sensitive names, no duplicate name, valid UTF-8, unknown members
// refused); a document those rules refuse is read again with encoding/json
// and lockstep's own checks, which decide, and name the field, exactly as
// before (FuzzParseAgrees holds the two to one answer).
//
// [Manifest.Encode] writes the canonical encoding (sorted keys, no
// insignificant white space, no HTML escaping), and [Manifest.Digest] is the
// SHA-256 of it, so the digest of a manifest does not depend on how its file
// was formatted.
//
// The package does no I/O beyond what its callers hand it; stores, signatures
// and network sources live in sibling packages and implement [Store] and
// [Source].
package manifest
