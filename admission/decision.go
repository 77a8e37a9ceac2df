package admission

import "time"

// Kind classifies a finding. The values are stable: they appear in JSON
// reports and in the README.
type Kind string

// The kinds of finding.
const (
	KindImageDigestMismatch   Kind = "image-digest-mismatch"
	KindImageNotPinned        Kind = "image-not-pinned"
	KindImageSignature        Kind = "image-signature-invalid"
	KindAssetNotInManifest    Kind = "asset-not-in-manifest"
	KindAssetMissingOnCDN     Kind = "asset-missing-on-cdn"
	KindAssetContentMismatch  Kind = "asset-content-mismatch"
	KindManifestInvalid       Kind = "manifest-invalid"
	KindManifestExpired       Kind = "manifest-expired"
	KindManifestRollback      Kind = "manifest-rollback"
	KindManifestUnsigned      Kind = "manifest-unsigned"
	KindManifestSignature     Kind = "manifest-signature-invalid"
	KindDependencyUnreachable Kind = "dependency-unreachable"
	KindCDNLoop               Kind = "cdn-loop"
	KindTLSExpiring           Kind = "tls-expiring"
)

// Severity says whether a finding refuses admission.
type Severity string

// Severities.
const (
	// Refuse: the instance must not join.
	Refuse Severity = "refuse"
	// Warn: reported, not refused (e.g. a certificate expiring soon).
	Warn Severity = "warn"
)

// Finding is one reason a decision is what it is.
type Finding struct {
	Kind     Kind     `json:"kind"`
	Severity Severity `json:"severity"`
	// Subject names what the finding is about: an image role, an asset
	// path, an endpoint.
	Subject string `json:"subject,omitempty"`
	Got     string `json:"got,omitempty"`
	Want    string `json:"want,omitempty"`
	Message string `json:"message"`
}

// Decision is the outcome of an admission check.
type Decision struct {
	// Allowed is true only when every check passed.
	Allowed bool `json:"allowed"`
	// Unverified is true when the instance was refused because something
	// could not be checked (exit 3), as opposed to a mismatch (exit 1).
	Unverified bool      `json:"unverified,omitempty"`
	Findings   []Finding `json:"findings"`
	// DryRun is true when the decision was reported without acting.
	DryRun bool      `json:"dryRun,omitempty"`
	At     time.Time `json:"at"`
}
