package fleet

import (
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Observed is one container as an orchestrator reports it: no agent is
// asked, so only the running image is known, not the served assets nor the
// manifest an agent would check against.
type Observed struct {
	// Name names the container, e.g. "TASK-ID/CONTAINER" or
	// "NAMESPACE/POD/CONTAINER".
	Name string `json:"name"`
	// Image is the image reference the orchestrator was told to run.
	Image string `json:"image"`
	// Running is the digest the runtime reports: an index, a manifest or a
	// config digest; zero when it reported none (a container not started).
	Running manifest.Digest `json:"running"`
	// Platform is os/arch[/variant] when known, else "".
	Platform string `json:"platform,omitempty"`
}

// observedInstance compares one orchestrator-reported container with the
// release: its running digest against the release image it belongs to,
// under the gate's rule (manifest.Image.Identify: index, manifest or config
// digest, for the platform).
func observedInstance(m *manifest.Manifest, t Target) Instance {
	o := t.Observed
	in := Instance{Name: o.Name, Target: t.URL, Spec: t.Spec, Running: o.Running.String(), Agentless: true}
	if in.Target == "" {
		in.Target = t.Spec
	}
	im := releaseImage(m, o)
	switch {
	case im == nil:
		in.Differences = []Difference{{Kind: DiffImage, Got: in.Running,
			Message: fmt.Sprintf("runs image %q, which the manifest does not have", o.Image)}}
	case !im.Matches(o.Running, o.Platform):
		in.Differences = []Difference{imageDifference(im, o.Running, o.Platform)}
	default:
		in.Release, in.Generation = m.Release.Name, m.Release.Generation
	}
	in.identity = in.Running
	if im != nil && im.Matches(o.Running, o.Platform) {
		in.identity = im.Digest.String()
	}
	return in
}

// releaseImage finds the release image a container runs: the one any of
// whose digests it reports, else the one of its repository, else the only
// image of a single-image release; nil when none is.
func releaseImage(m *manifest.Manifest, o *Observed) *manifest.Image {
	for i := range m.Images {
		if m.Images[i].Matches(o.Running, "") {
			return &m.Images[i]
		}
	}
	repo := repository(o.Image)
	for i := range m.Images {
		if repo != "" && repository(m.Images[i].Ref) == repo {
			return &m.Images[i]
		}
	}
	if len(m.Images) == 1 {
		return &m.Images[0]
	}
	return nil
}

// repository is a reference without its digest and tag.
func repository(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}
