package admission

import (
	"context"
	"fmt"

	"github.com/lockstep-dev/lockstep/manifest"
)

// ProvenanceVerifier verifies the build provenance of a manifest's images
// from the attestations embedded in it, with no registry request.
// *provenance.Verifier (package verify/provenance) is the implementation
// (not imported here: the admission layer imports no verify package). Its
// refusals are found by errors.As as *verdict.MismatchError; a manifest
// without a source repository and commit is a *manifest.ValidationError.
type ProvenanceVerifier interface {
	// VerifyEmbedded checks m.Images against m.Verification.Attestations
	// and m.Release.Source.
	VerifyEmbedded(ctx context.Context, m *manifest.Manifest) error
}

// provenance verifies the embedded provenance of the manifest image the
// instance must run. A manifest that names no source to bind the
// provenance to is refused, as is one that embeds nothing for the image.
func (c *checker) provenance(ctx context.Context, m *manifest.Manifest) {
	im, ok := lookupImage(m, c.cfg.Image)
	if !ok {
		return // pickImage has refused already
	}
	subject := "image " + im.Name
	if !m.Release.Source.Bindable() {
		c.add(Finding{Kind: KindProvenance, Subject: subject, Want: "a release.source repository and commit",
			Message: fmt.Sprintf("manifest %s names no source repository and commit, so the provenance of image %s cannot be bound to it (record it with the source)", m.ID(), im.Name)})
		return
	}
	only := *m
	only.Images = []manifest.Image{*im}
	c.verdicts(c.cfg.Provenance.VerifyEmbedded(ctx, &only), KindProvenance, subject, "provenance of "+im.Name)
}
