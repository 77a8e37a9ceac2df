// Package provenance verifies the SLSA build provenance of a release's
// images and binds it to the release: an image counts only when a signed
// in-toto statement says it was built from the release's own source
// repository and commit (manifest.Release.Source).
//
// Attestations are found where the tools that make them put them: cosign's
// attestation image (the `sha256-<hex>.att` tag, one DSSE envelope a
// layer) and the OCI referrers API (go-containerregistry's
// remote.Referrers, which falls back to the referrers tag schema), where
// GitHub artifact attestations and `cosign attest --new-bundle-format`
// store Sigstore bundles (artifactType
// application/vnd.dev.sigstore.bundle.v0.3+json).
//
// Each attestation is checked in this order, and the first check it fails
// is its refusal (an *Error naming the Check): the envelope's signature
// (a key, or a keyless identity against a trusted root, offline, as
// verify/imagesig checks image signatures), the statement's type
// (in-toto), its subject (it names the pinned digest), its predicate type
// (SLSA provenance v1 or v0.2), and the build's own source repository and
// commit, read where its builder writes them (v0.2:
// invocation.configSource; v1, by buildType: GitHub Actions'
// externalParameters.workflow, GitLab Runner's externalParameters.source,
// Cloud Build's externalParameters.buildConfigSource, BuildKit's
// externalParameters.configSource, with the commit from the resolved
// dependency of that same repository), which must
// equal the release's. One attestation that passes every check is enough
// for a digest; others beside it, good or bad, change nothing, and an
// attestation never counts for a digest it does not name.
//
// Which digests: each image's pinned digest (its index, or its only
// manifest) must have a provenance that passes. A platform manifest of an
// index is bound through the index's digest (the index names it by
// digest); when the builder has attached a provenance to the platform
// manifest itself, it must pass too (a platform built from another commit
// is refused), while attestations of other signers or of other kinds (an
// SBOM, a scan) on it are left alone.
//
// Verify reads the registry and returns the attestations that passed, to
// embed in the manifest (manifest.Verification.Attestations);
// VerifyEmbedded checks a manifest from that material alone, with no
// request to any registry, as the boot gate does. A registry that cannot
// be reached is a *verdict.UnavailableError (exit 3), never a yes.
package provenance
