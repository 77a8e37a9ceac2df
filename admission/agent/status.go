package agent

import (
	"sort"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/agentapi"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// The wire contract's names, kept here for the agent's users; the
// definitions live in package agentapi, which the fleet check reads.
const (
	StatusAPIVersion = agentapi.StatusAPIVersion
	StatusKind       = agentapi.StatusKind
	StatePending     = agentapi.StatePending
	StateAdmitted    = agentapi.StateAdmitted
	StateRefused     = agentapi.StateRefused
	StateUnverified  = agentapi.StateUnverified
	MaxListedAssets  = agentapi.MaxListedAssets
)

// The parts of Status that are the agent's wire contract (see agentapi).
type (
	Identity    = agentapi.Identity
	Running     = agentapi.Running
	ManifestRef = agentapi.ManifestRef
	AssetStatus = agentapi.AssetStatus
)

// Status is the document GET /v1/status serves. Its JSON shape is stable
// and documented in docs/fleet.md; fields are only ever added.
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
