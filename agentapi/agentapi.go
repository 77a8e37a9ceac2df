package agentapi

import "github.com/lockstep-dev/lockstep/manifest"

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

// Identity says which instance an agent runs on.
type Identity struct {
	// InstanceID is the EC2 instance ID, from IMDSv2, where available.
	InstanceID string `json:"instanceId,omitempty"`
	// ASG is the Auto Scaling group's name, where known.
	ASG string `json:"asg,omitempty"`
	// AvailabilityZone and PrivateIP come from IMDS, where available.
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	PrivateIP        string `json:"privateIp,omitempty"`
	// Hostname is always set (os.Hostname).
	Hostname string `json:"hostname"`
	// Source is "imds" when the instance ID came from IMDS, "flag" when it
	// was given (lockstep agent --instance-name), else "hostname".
	Source string `json:"source"`
}

// Name is the instance ID where known, else the hostname.
func (id Identity) Name() string {
	if id.InstanceID != "" {
		return id.InstanceID
	}
	return id.Hostname
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
