package imagesig_test

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// TestCosignSignedImages: lockstep verifies, offline, images that the
// real cosign CLI signed in a real docker-registry; an index that cosign
// signed without --recursive is refused under the default policy, since
// its platform manifests are unsigned (cosign#786).
func TestCosignSignedImages(t *testing.T) {
	cosign := sigtest.RequireCosign(t)
	host := testenv.Registry(t)
	ctx := context.Background()
	dir := t.TempDir()
	_, pub := cosign.GenerateKeyPair(t, dir)
	key, err := signature.LoadVerifier(ctx, pub)
	if err != nil {
		t.Fatal(err)
	}
	verifier := func(p imagesig.Policy) *imagesig.Verifier {
		v, err := imagesig.New(imagesig.Options{Trust: signature.Options{Key: key}, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	sign := func(ref string, extra ...string) {
		args := append([]string{"sign", "--key", "cosign.key", "--tlog-upload=false", "--allow-http-registry", "--allow-insecure-registry", "-y"}, extra...)
		cosign.MustRun(t, dir, append(args, ref)...)
	}

	// One image.
	img, _ := random.Image(1024, 2)
	ref, _ := name.ParseReference(host + "/store/web:v1")
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	dref := ref.Context().Digest(d.String())
	im := sigtest.Pin(t, "web", dref)
	if err := verifier(imagesig.Policy{}).Verify(ctx, []manifest.Image{im}); !signature.IsUnsigned(err) {
		t.Fatalf("Verify(before cosign signed) = %v, want unsigned", err)
	}
	sign(dref.String())
	if err := verifier(imagesig.Policy{}).Verify(ctx, []manifest.Image{im}); err != nil {
		t.Errorf("Verify(cosign-signed image) = %v", err)
	}
	other, err := signature.VerifierFromPEM(sigtest.PublicPEM(t, sigtest.Key(t)))
	if err != nil {
		t.Fatal(err)
	}
	ov, _ := imagesig.New(imagesig.Options{Trust: signature.Options{Key: other}})
	if err := ov.Verify(ctx, []manifest.Image{im}); classify(err) != refused {
		t.Errorf("Verify(cosign-signed image, another key) = %v, want a refusal", err)
	}

	// An index, signed at the top only.
	var idx v1.ImageIndex = empty.Index
	for _, arch := range []string{"amd64", "arm64"} {
		pi, _ := random.Image(512, 1)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: pi, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	iref, _ := name.ParseReference(host + "/store/multi:v1")
	if err := remote.WriteIndex(iref, idx); err != nil {
		t.Fatal(err)
	}
	id, _ := idx.Digest()
	idref := iref.Context().Digest(id.String())
	iim := sigtest.Pin(t, "multi", idref)
	sign(idref.String(), "--recursive=false")
	if err := verifier(imagesig.Policy{}).Verify(ctx, []manifest.Image{iim}); classify(err) != unsigned {
		t.Errorf("Verify(index signed at the top only, default policy) = %v, want unsigned platforms", err)
	}
	if err := verifier(imagesig.Policy{Index: imagesig.IndexOnly}).Verify(ctx, []manifest.Image{iim}); err != nil {
		t.Errorf("Verify(index signed at the top only, policy index) = %v", err)
	}
	sign(idref.String(), "--recursive")
	for _, p := range []imagesig.Policy{{}, {Index: imagesig.IndexAndPlatforms}} {
		if err := verifier(p).Verify(ctx, []manifest.Image{iim}); err != nil {
			t.Errorf("Verify(index signed with --recursive, policy %q) = %v", p.Index, err)
		}
	}

	// Embedded from the real registry, verified with no registry at all.
	emb, err := verifier(imagesig.Policy{}).Embed(ctx, []manifest.Image{im, iim})
	if err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{Images: []manifest.Image{im, iim}, Verification: emb}
	if err := verifier(imagesig.Policy{Index: imagesig.IndexAndPlatforms}).VerifyEmbedded(ctx, m); err != nil {
		t.Errorf("VerifyEmbedded(cosign's signatures) = %v", err)
	}
}
