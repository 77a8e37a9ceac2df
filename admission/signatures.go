package admission

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// ImageVerifier verifies the cosign signatures of a manifest's images.
// *imagesig.Verifier (package verify/imagesig) is the implementation
// (not imported here: it links cosign's packages, which the boot path's
// dependency guard keeps out of admission); its
// policy says which digests of an index must be signed, and for a boot
// gate names the gate's platform, so that an index signature alone never
// vouches for what the instance pulled (cosign#786). Both methods return
// refusals that errors.As finds as *verdict.MismatchError (a missing, wrong
// or unparseable signature) and *verdict.UnavailableError for a registry
// that cannot be reached, joined.
type ImageVerifier interface {
	// VerifyEmbedded verifies m.Images from m.Verification alone, with no
	// request to any registry.
	VerifyEmbedded(ctx context.Context, m *manifest.Manifest) error
	// Verify verifies images against their registry.
	Verify(ctx context.Context, images []manifest.Image) error
}

// How the image's signatures were verified (Decision.ImageSignature).
const (
	// SignaturesEmbedded: from the material embedded in the signed
	// manifest alone; no registry request was sent.
	SignaturesEmbedded = "embedded"
	// SignaturesRegistry: the manifest embeds no material for the image,
	// so the signatures were read from the registry.
	SignaturesRegistry = "registry"
)

// embedsFor reports whether m embeds signature material for any digest
// of im (its index or one of its platform manifests).
func embedsFor(m *manifest.Manifest, im *manifest.Image) bool {
	if m.Verification == nil {
		return false
	}
	digests := map[manifest.Digest]bool{im.Digest: true}
	for _, p := range im.Platforms {
		digests[p.Digest] = true
	}
	for _, e := range m.Verification.Signatures {
		if digests[e.Digest] {
			return true
		}
	}
	return false
}

// imageSignatures verifies the signatures of the manifest image the
// instance must run. When the manifest embeds material for the image, it
// alone decides: a missing or bad embedded signature refuses, and the
// registry is never asked (a thousand booting instances send it nothing).
// Only when the manifest embeds nothing for the image is the registry
// read, and the decision says so; with RequireEmbeddedSignatures that is
// a refusal instead.
func (c *checker) imageSignatures(ctx context.Context, m *manifest.Manifest) {
	cfg := c.cfg
	im, ok := lookupImage(m, cfg.Image)
	if !ok {
		return // pickImage has refused already
	}
	subject := "image " + im.Name
	only := *m
	only.Images = []manifest.Image{*im}
	var err error
	switch {
	case embedsFor(m, im):
		c.update(func(d *Decision) { d.Image, d.ImageSignature = im.Name, SignaturesEmbedded })
		err = cfg.ImageSignatures.VerifyEmbedded(ctx, &only)
	case cfg.RequireEmbeddedSignatures:
		c.add(Finding{Kind: KindImageSignature, Subject: subject, Want: "signatures embedded in the manifest",
			Message: fmt.Sprintf("manifest %s embeds no signature material for image %s, and embedded signatures are required (record it with the signatures embedded)", m.ID(), im.Name)})
		return
	default:
		c.update(func(d *Decision) { d.Image, d.ImageSignature = im.Name, SignaturesRegistry })
		cfg.Logger.Warn("the manifest embeds no image signatures: reading them from the registry", "image", im.Name, "manifest", m.ID())
		err = cfg.ImageSignatures.Verify(ctx, only.Images)
	}
	c.verdicts(err, KindImageSignature, subject, "image signatures of "+im.Name)
}

// verdicts turns a verifier's errors (joined) into findings: a refusal
// (*verdict.MismatchError) of kind, material that is not valid
// manifest-invalid, anything else what could not be reached.
func (c *checker) verdicts(err error, kind Kind, subject, what string) {
	for _, e := range split(err) {
		var me *verdict.MismatchError
		var ve *manifest.ValidationError
		switch {
		case errors.As(e, &me):
			c.add(Finding{Kind: kind, Subject: subject, Got: me.Got, Want: me.Want, Message: e.Error()})
		case errors.As(e, &ve):
			c.add(Finding{Kind: KindManifestInvalid, Subject: subject, Message: e.Error()})
		default:
			c.unreachable(what, e)
		}
	}
}

// split undoes errors.Join; nil is no error.
func split(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
