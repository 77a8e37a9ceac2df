package admission

import (
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/manifest"
)

// image compares the observation with the manifest image.
func (c *checker) image(m *manifest.Manifest, o *running.Observation, err error) {
	cfg := c.cfg
	if err != nil {
		c.unreachable("running digest", fmt.Errorf("observing the running image: %w", err))
		return
	}
	c.update(func(d *Decision) {
		d.Running = o
		if !o.ImageID.IsZero() {
			d.RunningDigest = o.ImageID
		} else if len(o.RepoDigests) > 0 {
			d.RunningDigest = o.RepoDigests[0]
		}
	})
	if o.ImageID.IsZero() && (len(o.Unpinned) > 0 || len(o.RepoDigests) == 0) {
		got := strings.Join(o.Unpinned, ", ")
		if got == "" {
			got = o.Reference
		}
		c.add(Finding{Kind: KindImageNotPinned, Subject: "image " + cfg.Image, Got: got, Want: "a sha256 digest",
			Message: fmt.Sprintf("%s reports no digest for the running image (only %q): a tag proves nothing", o.Source, got)})
		return
	}
	if m == nil {
		return
	}
	im, ok := c.pickImage(m)
	if !ok {
		return
	}
	match, f := Match(im, o, cfg.Platform)
	if f != nil {
		c.add(*f)
		return
	}
	c.update(func(d *Decision) { d.Match = match })
}

// lookupImage returns the image role name of m; "" is m's only image.
func lookupImage(m *manifest.Manifest, name string) (*manifest.Image, bool) {
	if name == "" && len(m.Images) == 1 {
		return &m.Images[0], true
	}
	return m.Image(name)
}

// pickImage returns the manifest image to compare with.
func (c *checker) pickImage(m *manifest.Manifest) (*manifest.Image, bool) {
	name := c.cfg.Image
	if im, ok := lookupImage(m, name); ok {
		if name == "" {
			c.update(func(d *Decision) { d.Image = im.Name })
		}
		return im, true
	}
	var names []string
	for _, im := range m.Images {
		names = append(names, im.Name)
	}
	msg := fmt.Sprintf("manifest %s has no image %q (it has: %s)", m.ID(), name, strings.Join(names, ", "))
	if name == "" {
		msg = fmt.Sprintf("manifest %s has %d images (%s): name the one this instance runs", m.ID(), len(names), strings.Join(names, ", "))
	}
	c.add(Finding{Kind: KindImageNotNamed, Subject: "image " + name, Message: msg})
	return nil, false
}

// Match compares what a runtime reported with a manifest image on
// platform (os/arch[/variant]), by manifest.Image.Identify's rule: a match
// is the image's index digest, the platform's manifest digest or the
// platform's config digest, and nothing else (a single-platform image's
// digest is not a match on another platform); it returns which ("index",
// "manifest", "config"). When the runtime reports an image ID, that
// identity alone decides; otherwise a repo digest must match and none may
// belong to another platform. An index digest matches only on a platform
// the index holds, and when the runtime reports the image's own platform
// (Docker's image inspect) it must be platform too. A mismatch is returned
// as an image-digest-mismatch finding.
func Match(im *manifest.Image, o *running.Observation, platform string) (string, *Finding) {
	subject := "image " + im.Name
	judge := func(d manifest.Digest) (match, other string) {
		match, p := im.Identify(d, platform)
		if p != nil {
			other = p.String()
		}
		return match, other
	}
	mismatch := func(d manifest.Digest, other string) *Finding {
		f := &Finding{Kind: KindImageDigestMismatch, Subject: subject, Got: d.String(), Want: want(im, platform)}
		if other != "" {
			f.Message = fmt.Sprintf("the running image (%s) is %s, the %s image of %s; this instance is %s", o.Source, d, other, im.Ref, platform)
		} else {
			f.Message = fmt.Sprintf("the running image (%s) is %s, which is not %s (%s) for %s", o.Source, d, im.Ref, im.Digest, platform)
		}
		return f
	}
	if o.Platform != "" && platform != "" {
		// The runtime says what the image is: it must be the gate's
		// platform, whatever digest it reports.
		if p, ok := manifest.ParsePlatform(o.Platform); !ok || !manifest.PlatformMatches(p, platform) {
			d := o.ImageID
			if d.IsZero() && len(o.RepoDigests) > 0 {
				d = o.RepoDigests[0]
			}
			return "", &Finding{Kind: KindImageDigestMismatch, Subject: subject, Got: o.Platform + " " + d.String(), Want: platform + ": " + want(im, platform),
				Message: fmt.Sprintf("the running image (%s) is a %s image; this instance is %s", o.Source, o.Platform, platform)}
		}
	}
	if !o.ImageID.IsZero() {
		match, other := judge(o.ImageID)
		if match == "" {
			return "", mismatch(o.ImageID, other)
		}
		return match, nil
	}
	best := ""
	for _, d := range o.RepoDigests {
		match, other := judge(d)
		if other != "" {
			return "", mismatch(d, other)
		}
		if best == "" {
			best = match
		}
	}
	if best == "" && len(o.RepoDigests) > 0 {
		return "", mismatch(o.RepoDigests[0], "")
	}
	return best, nil
}

// want describes the digests that would match.
func want(im *manifest.Image, platform string) string {
	ds := []string{im.Digest.String()}
	for _, p := range im.Platforms {
		if manifest.PlatformMatches(p, platform) && p.Digest != im.Digest {
			ds = append(ds, p.Digest.String(), p.Config.String())
		} else if manifest.PlatformMatches(p, platform) {
			ds = append(ds, p.Config.String())
		}
	}
	return strings.Join(ds, " or ")
}
