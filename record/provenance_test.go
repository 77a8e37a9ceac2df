package record

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/provenance"
)

// TestManifestProvenance: record verifies the images' provenance against
// the release's source once pinned, refuses a provenance of another commit
// (writing nothing), and with EmbedAttestations embeds what passed in a v2
// manifest that verifies from the material alone.
func TestManifestProvenance(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key := sigtest.Key(t)
	const repo, commit = "https://github.com/acme/store", "0123456789abcdef0123456789abcdef01234567"
	img := pushImage(t, reg.Ref("store/web:v1"))
	h, _ := img.Digest()
	repoRef, _ := name.NewRepository(reg.Ref("store/web"))
	d := repoRef.Digest(h.String())
	sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit, d), nil, nil, nil)
	v, err := provenance.New(provenance.Options{Trust: signature.Options{Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	opts := func(c string, embed bool) Options {
		return Options{Release: "store-web", Generation: 1, Images: []Image{{"web", d.String()}},
			Source: &manifest.BuildSource{Repository: repo, Commit: c}, Provenance: v.Verify, EmbedAttestations: embed, Getenv: env(nil)}
	}

	m, err := Manifest(ctx, opts(commit, false))
	if err != nil {
		t.Fatalf("Manifest(the attested commit) = %v", err)
	}
	if m.Verification != nil || m.APIVersion != manifest.APIVersion {
		t.Errorf("without EmbedAttestations: verification %+v, apiVersion %s; want none, v1", m.Verification, m.APIVersion)
	}

	m, err = Manifest(ctx, opts(commit, true))
	if err != nil {
		t.Fatalf("Manifest(embedding) = %v", err)
	}
	if m.APIVersion != manifest.APIVersionV2 || m.Verification == nil || len(m.Verification.Attestations) != 1 {
		t.Fatalf("embedded: apiVersion %s, verification %+v; want v2 and one attestation", m.APIVersion, m.Verification)
	}
	raw, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := manifest.Parse(raw)
	if err != nil {
		t.Fatalf("Parse(the recorded v2 manifest) = %v", err)
	}
	before := reg.Requests()
	if err := v.VerifyEmbedded(ctx, parsed); err != nil {
		t.Errorf("VerifyEmbedded(the recorded manifest) = %v", err)
	}
	if reg.Requests() != before {
		t.Error("VerifyEmbedded asked the registry")
	}

	_, err = Manifest(ctx, opts("fedcba9876543210fedcba9876543210fedcba98", true))
	var pe *provenance.Error
	if !errors.As(err, &pe) || pe.Check != provenance.CheckCommit || !verdict.IsMismatch(err) {
		t.Errorf("Manifest(another commit) = %v, want a provenance commit refusal", err)
	}

	// No source: refused before any request.
	before = reg.Requests()
	o := opts(commit, false)
	o.Source = nil
	var ve *manifest.ValidationError
	if _, err := Manifest(ctx, o); !errors.As(err, &ve) || ve.Field != "release.source" {
		t.Errorf("Manifest(no source) = %v, want a release.source validation error", err)
	}
	if reg.Requests() != before {
		t.Error("Manifest(no source) sent registry requests before refusing")
	}
	o = opts(commit, true)
	o.Provenance = nil
	if _, err := Manifest(ctx, o); err == nil || !strings.Contains(err.Error(), "Provenance") {
		t.Errorf("Manifest(EmbedAttestations without Provenance) = %v, want an option error", err)
	}
}
