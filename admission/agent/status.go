package agent

import (
	"sort"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// The identity of the status document; the fleet check refuses any other.
const (
	StatusAPIVersion = "lockstep.dev/v1"
	StatusKind       = "AgentStatus"
)

// The states of an agent.
const (
	// StatePending: no check has finished yet.
	StatePending = "pending"
	// StateAdmitted: the last check admitted the instance.
	StateAdmitted = "admitted"
	// StateRefused: the last check found a mismatch.
	StateRefused = "refused"
	// StateUnverified: the last check could not verify (and so refused).
	StateUnverified = "unverified"
)

// MaxListedAssets caps AssetStatus.NotInManifest; the rest is counted in
// NotInManifestOmitted.
const MaxListedAssets = 100

// Status is the document GET /v1/status serves. Its JSON shape is stable
// and documented in the README; fields are only ever added.
type Status struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Instance   Identity `json:"instance"`
	// State is pending, admitted, refused or unverified.
	State string `json:"state"`
	// Image is the role of the image checked (manifest image name).
	Image string `json:"image,omitempty"`
	// Platform is os/arch[/variant] of the instance.
	Platform string `json:"platform,omitempty"`
	// Running is absent when the running digest could not be observed.
	Running *Running `json:"running,omitempty"`
	// Manifest is the manifest the last check compared against; absent when
	// it could not be fetched.
	Manifest *ManifestRef `json:"manifest,omitempty"`
	// Assets is absent when the agent probes nothing.
	Assets *AssetStatus `json:"assets,omitempty"`
	// Decision is the last check's decision; absent while pending.
	Decision *admission.Decision `json:"decision,omitempty"`
	// CheckedAt is when the last check finished.
	CheckedAt *time.Time `json:"checkedAt,omitempty"`
	// CheckSeconds is how long the last check took.
	CheckSeconds float64 `json:"checkSeconds,omitempty"`
	// Checks counts the checks finished since the agent started.
	Checks int64 `json:"checks"`
	// Certificates lists the TLS endpoints the last check touched.
	Certificates []transport.Certificate `json:"certificates,omitempty"`
	Agent        AgentInfo               `json:"agent"`
}

// Running is the digest the instance was observed to run.
type Running struct {
	Digest manifest.Digest `json:"digest"`
	// Source says where it was read, e.g. "docker:web" or "file:/run/x".
	Source string `json:"source,omitempty"`
}

// ManifestRef names the manifest a check compared against.
type ManifestRef struct {
	Release    string          `json:"release"`
	Generation int64           `json:"generation"`
	Digest     manifest.Digest `json:"digest"`
	// Fingerprint is the manifest's assets.fingerprint.
	Fingerprint manifest.Digest `json:"fingerprint"`
	Location    string          `json:"location,omitempty"`
}

// AssetStatus describes the asset IDs the instance serves, as its probes saw
// them.
type AssetStatus struct {
	// Fingerprint is manifest.Fingerprint over the served asset IDs, each
	// with the manifest's hash; a served ID the manifest lacks counts with an
	// all-zero hash (as in admission's decision), so the value differs from
	// that of every subset of the manifest. When Complete, it equals the manifest's fingerprint.
	// When the probes see only part of the manifest's assets (the usual case:
	// a page references a few of them) it is the fingerprint of that part:
	// equal across instances that serve the same part, comparable with the
	// manifest only through NotInManifest.
	Fingerprint manifest.Digest `json:"fingerprint"`
	// Complete is true when the served set is exactly the manifest's.
	Complete bool `json:"complete"`
	// Served counts the distinct asset IDs served; InManifest how many of
	// them the manifest has; ManifestAssets how many assets it has.
	Served         int `json:"served"`
	InManifest     int `json:"inManifest"`
	ManifestAssets int `json:"manifestAssets"`
	// NotInManifest lists served asset IDs the manifest lacks, sorted, at
	// most MaxListedAssets of them; NotInManifestOmitted counts the rest.
	NotInManifest        []string `json:"notInManifest"`
	NotInManifestOmitted int      `json:"notInManifestOmitted,omitempty"`
}

// AgentInfo describes the agent process.
type AgentInfo struct {
	Version   string    `json:"version,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	// IntervalSeconds is the nominal interval between checks.
	IntervalSeconds float64 `json:"intervalSeconds"`
}

// zeroHash stands for the unknown content of a served ID the manifest
// lacks.
var zeroHash = strings.Repeat("0", 64)

// Assets computes the served-asset status of served (asset IDs, i.e. paths
// relative to a CDN base) against m. Duplicates in served count once.
func Assets(m *manifest.Manifest, served []string) AssetStatus {
	uniq := make(map[string]bool, len(served))
	for _, id := range served {
		uniq[id] = true
	}
	files := make([]manifest.File, 0, len(uniq))
	var missing []string
	for id := range uniq {
		f, ok := m.Assets.File(id)
		if !ok {
			missing = append(missing, id)
			f = manifest.File{Path: id, SHA256: zeroHash}
		}
		files = append(files, f)
	}
	sort.Strings(missing)
	st := AssetStatus{
		Fingerprint:    manifest.Fingerprint(files),
		Served:         len(uniq),
		InManifest:     len(uniq) - len(missing),
		ManifestAssets: len(m.Assets.Files),
		NotInManifest:  []string{},
	}
	st.Complete = len(missing) == 0 && st.InManifest == st.ManifestAssets
	if len(missing) > MaxListedAssets {
		st.NotInManifestOmitted = len(missing) - MaxListedAssets
		missing = missing[:MaxListedAssets]
	}
	st.NotInManifest = append(st.NotInManifest, missing...)
	return st
}
