// Package registry pins image references by digest: it resolves each tag
// with go-containerregistry and records the index digest, every platform's
// manifest digest and every platform's config digest (the image ID), the
// three values a runtime may report.
//
// [Pin] resolves one reference, [PinAll] many, concurrently and in input
// order; [Resolve] is PinAll that also returns every moved tag it found. A
// reference already pinned by digest ("repo@sha256:…") is checked
// against the registry; one that names a tag as well
// ("repo:tag@sha256:…") must still have its tag resolve to that digest.
// [Moved] compares a new pin with a previous release manifest and reports
// every tag that now names other bytes: the moved tag behind the Epic Games
// Store outage of 2021-04-06.
//
// Every request goes through internal/transport ([transport.Client]'s
// Transport), and go-containerregistry's own retryer is configured from the
// same [transport.Policy]. Credentials come from go-containerregistry's
// default keychain (the Docker config, its credential helpers, so also ECR's
// helper) unless Options say otherwise. With Options.Cache, image configs
// and platform manifests, immutable and addressed by digest, are kept in a
// directory and verified on every read, so that pinning a tag again costs
// one request. With or without it, one Resolve fetches each platform
// manifest and config of a repository once, however many tags share it,
// and an index's platform manifests concurrently.
//
// Errors are typed at the boundary, never by matching strings:
//   - *ReferenceError: the reference or platform does not parse (input);
//   - *NotFoundError: the registry says the repository, tag or digest does
//     not exist (404, MANIFEST_UNKNOWN, NAME_UNKNOWN) (input);
//   - *PlatformError: an index lacks the wanted platform, or holds no image
//     (input);
//   - *MovedTagError: a tag now names other bytes (a mismatch: it unwraps to
//     one *verdict.MismatchError per tag);
//   - *verdict.UnavailableError: the registry could not be reached, refused
//     our credentials (401, 403) or did not answer usably.
//
// The input errors have an InvalidInput method that returns true: the CLI
// maps them to exit 2, a *MovedTagError to 1, the rest to 3.
package registry
