// Package keyless signs a release manifest without a long-lived key, the
// way `cosign sign-blob --new-bundle-format` does in CI: an ephemeral key,
// a short-lived certificate from Fulcio for the workflow's OIDC identity,
// and an entry in the Rekor transparency log, all in one Sigstore bundle
// (MANIFEST.sigstore.json) that consumers verify offline against a
// trusted root (signature.Options.Identity).
//
// It talks to Fulcio, Rekor and (without a signing config) the Sigstore
// TUF repository through cosign's and sigstore-go's own clients, so it is
// kept out of the verification packages that the boot gate imports.
package keyless
