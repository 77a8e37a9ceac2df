// Package signature signs release manifests and verifies their signatures,
// in cosign's formats, so that the cosign CLI and lockstep accept each
// other's signatures.
//
// A keyed signature is the base64 of a signature over the manifest file's
// exact bytes (MANIFEST.sig, what `cosign sign-blob --key` writes), and
// optionally a Sigstore bundle (v0.3, a message signature with a public-key
// hint). A keyless signature is a Sigstore bundle holding a Fulcio
// certificate and a Rekor entry, made in CI with the workflow's OIDC
// identity (SignKeyless) and verified offline against a trusted root.
//
// Keys load with LoadSigner and LoadVerifier: cosign's encrypted PEM key
// pairs (password from COSIGN_PASSWORD), plain PEM keys (ECDSA, Ed25519,
// RSA), and KMS URIs for the providers compiled in.
//
// Every verification failure is an *Error (a refusal: exit 1), which also
// matches *verdict.MismatchError under errors.As; an unsigned manifest is an
// *Error that wraps ErrUnsigned. A signature or bundle that does not parse
// is a refusal, never a success. Errors reaching a KMS or fetching a
// trusted root are *verdict.UnavailableError (exit 3).
package signature
