package fleet

import (
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/imagename"
	"github.com/lockstep-dev/lockstep/manifest"
)

// Observed is one container as an orchestrator reports it: no agent is
// asked, so only the running image is known, not the served assets nor the
// manifest an agent would check against.
type Observed struct {
	// Name names the container, e.g. "TASK-ID/CONTAINER" or
	// "NAMESPACE/POD/CONTAINER".
	Name string `json:"name"`
	// Container is the container's own name in its task or pod spec: the
	// image role it runs when its repository holds several.
	Container string `json:"container,omitempty"`
	// Image is the image reference the orchestrator was told to run.
	Image string `json:"image"`
	// Running is the digest the runtime reports: an index, a manifest or a
	// config digest; zero when it reported none (a container not started).
	Running manifest.Digest `json:"running"`
	// Platform is os/arch[/variant] of the node or task when the API
	// reports it, else "" (then an index digest matches on any platform it
	// holds).
	Platform string `json:"platform,omitempty"`
}

// observedInstance compares one orchestrator-reported container with the
// release image its spec names (roleImage), under the gate's rule
// (manifest.Image.Identify: the index digest on a platform it holds, or
// the platform's manifest or config digest), never with any other image
// of the release: a tag re-pushed with the bytes of another image of the
// same release is divergent.
func observedInstance(m *manifest.Manifest, t Target, names imagename.Names) Instance {
	o := t.Observed
	in := Instance{Name: o.Name, Target: t.URL, Spec: t.Spec, Running: o.Running.String(), Agentless: true}
	if in.Target == "" {
		in.Target = t.Spec
	}
	in.identity = in.Running
	im, why := roleImage(m, o, names)
	switch {
	case im == nil:
		in.Differences = []Difference{{Kind: DiffImage, Got: in.Running, Message: why}}
	case !im.Matches(o.Running, o.Platform):
		in.Differences = []Difference{imageDifference(im, o.Running, o.Platform)}
	default:
		in.Release, in.Generation = m.Release.Name, m.Release.Generation
		in.identity = im.Digest.String()
	}
	return in
}

// roleImage is the release image a container's spec names, as the
// webhook and the gate name it: the image of the container's repository
// (normalised by names: case, default port, a trailing dot, numeric and
// loopback spellings, aliases); where the release has several images of
// that repository, the one whose role is the container's name, else the
// one whose tag the reference names. Never the image whose digest the
// container happens to report. When there is none, why says so.
func roleImage(m *manifest.Manifest, o *Observed, names imagename.Names) (im *manifest.Image, why string) {
	ref, err := names.Reference(o.Image)
	if err != nil {
		return nil, fmt.Sprintf("runs image %q, which is not a valid image reference: %v", o.Image, err)
	}
	repo := ref.Context().Name()
	var same []*manifest.Image
	for i := range m.Images {
		if r, err := names.Repository(m.Images[i].Repository); err == nil && r == repo {
			same = append(same, &m.Images[i])
		}
	}
	if len(same) == 1 {
		return same[0], ""
	}
	if len(same) == 0 {
		return nil, fmt.Sprintf("runs image %q, of repository %s, which the manifest does not have", o.Image, repo)
	}
	var roles []string
	for _, im := range same {
		if im.Name == o.Container {
			return im, ""
		}
		roles = append(roles, im.Name)
	}
	if tag := tagOf(o.Image); tag != "" {
		for _, im := range same {
			if im.Tag == tag {
				return im, ""
			}
		}
	}
	return nil, fmt.Sprintf("runs image %q: the manifest has %d images of %s (%s) and the container %q names none of them by its name or its tag",
		o.Image, len(same), repo, strings.Join(roles, ", "), o.Container)
}

// tagOf is the tag a reference names, "" for none.
func tagOf(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[i+1:]
	}
	return ""
}
