// Package imagesig verifies the cosign signatures of a release's images,
// by digest, with cosign's verification API: against the registry (the
// `sha256-<hex>.sig` signature images cosign pushes), or from signature
// material embedded in the signed manifest, which needs no registry call
// at all (Embed when recording, VerifyEmbedded at boot).
//
// A Policy says which manifests of an index must be signed: by default
// every platform manifest the release runs (an index signature alone does
// not sign what a node pulls: cosign#786), or the index alone, or both.
//
// Results are cached by digest and trust settings, never by tag, in
// memory and optionally on disk, with a bound on entries (Cache).
//
// Verification never contacts a transparency log or a
// certificate-transparency log: a keyed signature needs no log entry; a
// keyless one must carry its Rekor bundle, verified offline against the
// trusted root. Refusals are *signature.Error (exit 1; unsigned wraps
// signature.ErrUnsigned); a registry that cannot be reached is an
// *verdict.UnavailableError (exit 3).
package imagesig
