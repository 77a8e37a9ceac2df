package provenance_test

import (
	"context"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
	"github.com/lockstep-dev/lockstep/verify/provenance"
)

// bootManifest is a manifest of one image that embeds both its cosign
// signature and its provenance attestation, as record writes it with
// --embed-signatures --embed-attestations.
func bootManifest(b *testing.B) (*manifest.Manifest, signature.Options) {
	b.Helper()
	reg := sigtest.NewRegistry(b)
	key := sigtest.Key(b)
	d := reg.PushImage(b, "store/web", "v1")
	im := sigtest.Pin(b, "web", d)
	sigtest.SignImage(b, d, key, nil, nil, nil)
	sigtest.AttestImage(b, d, key, sigtest.Provenance(b, repo, commit, d), nil, nil, nil)
	trust := signature.Options{Key: key}
	sv, err := imagesig.New(imagesig.Options{Trust: trust})
	if err != nil {
		b.Fatal(err)
	}
	emb, err := sv.Embed(context.Background(), []manifest.Image{im})
	if err != nil {
		b.Fatal(err)
	}
	pv, err := provenance.New(provenance.Options{Trust: trust})
	if err != nil {
		b.Fatal(err)
	}
	if emb.Attestations, err = pv.Verify(context.Background(), []manifest.Image{im}, source); err != nil {
		b.Fatal(err)
	}
	return &manifest.Manifest{Release: manifest.Release{Source: source}, Images: []manifest.Image{im}, Verification: emb}, trust
}

// BenchmarkVerifyEmbeddedProvenance is what admit --require-provenance
// adds to a boot: one embedded attestation verified and checked.
func BenchmarkVerifyEmbeddedProvenance(b *testing.B) {
	m, trust := bootManifest(b)
	v, err := provenance.New(provenance.Options{Trust: trust})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := v.VerifyEmbedded(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyEmbeddedSignature is its anchor: the embedded image
// signature of the same image, which the gate already verifies with
// --require-image-signature (no cache).
func BenchmarkVerifyEmbeddedSignature(b *testing.B) {
	m, trust := bootManifest(b)
	v, err := imagesig.New(imagesig.Options{Trust: trust})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := v.VerifyEmbedded(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
}
