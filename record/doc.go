// Package record builds a release manifest: it pins every image of the
// release by digest (with verify/registry), hashes every static asset the
// release serves (with manifest/assets), fills in where the release was
// built from the CI environment, optionally embeds the images' signature
// material, and returns a manifest that validates.
//
// [Record] is the whole of `lockstep record`: [Manifest], then the CDN
// check of every recorded asset (verify/cdn), signing, and an atomic write
// of the manifest with its signature beside it; the command only parses
// flags and renders the result.
package record
