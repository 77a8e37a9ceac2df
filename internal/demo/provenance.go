package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/cosign/v2/pkg/types"
	"github.com/sigstore/sigstore/pkg/signature/dsse"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/record"
	"github.com/lockstep-dev/lockstep/verify/provenance"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// The repository the demo's store is built from, and the commits of its
// two builds.
const (
	sourceRepo = "https://github.com/acme/store"
	commitV1   = "1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a"
	commitV2   = "2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b"
)

// attestBuild: CI attests the image it built, as `cosign attest --type
// slsaprovenance1` does: built from sourceRepo at commitV2.
func attestBuild(ctx context.Context, e *Env) error {
	d, err := pinnedDigest(ctx, e)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "  $ cosign attest --key %s --type slsaprovenance1 --predicate provenance.json %s\n", e.rel(e.Key), d)
	if err := attest(ctx, e, d, commitV2); err != nil {
		return err
	}
	e.Say("CI attested %s: SLSA provenance v1, built from %s at %s (signed with the release key here; a builder key or keyless identity in CI)", d.DigestStr(), sourceRepo, commitV2[:7])
	return nil
}

// bindProvenance: record --require-provenance binds the image to the
// release's commit: the build's own commit passes, a claim that the image
// is another commit's is refused.
func bindProvenance(ctx context.Context, e *Env) error {
	d, err := pinnedDigest(ctx, e)
	if err != nil {
		return err
	}
	builder, err := signature.LoadVerifier(ctx, e.PublicKey)
	if err != nil {
		return err
	}
	v, err := provenance.New(provenance.Options{Trust: signature.Options{Key: builder}, Remote: []remote.Option{remote.WithTransport(e.Client.Transport())}})
	if err != nil {
		return err
	}
	check := func(commit string) error {
		e.Command("record", "--release", e.Release, "--generation", "3", "--image", "web="+e.ImageRef,
			"--source-repository", sourceRepo, "--source-commit", commit, "--require-provenance", "--provenance-key", e.rel(e.PublicKey))
		_, err := record.Manifest(ctx, record.Options{Release: e.Release, Generation: 3, Images: []record.Image{{Name: "web", Ref: e.ImageRef}},
			Source:   &manifest.BuildSource{Repository: sourceRepo, Commit: commit},
			Registry: registry.Options{Client: e.Client}, Provenance: v.Verify})
		return err
	}
	if err := check(commitV2); err != nil {
		return fmt.Errorf("the provenance of the build's own commit was refused: %w", err)
	}
	e.Say("provenance: image web %s was built from %s at %s, the release's commit (the manifest goes to stdout)", d.DigestStr(), sourceRepo, commitV2[:7])
	err = check(commitV1)
	var pe *provenance.Error
	if !errors.As(err, &pe) || pe.Check != provenance.CheckCommit {
		return fmt.Errorf("a release claiming commit %s for v2's image was not refused for its commit: %v", commitV1[:7], err)
	}
	return e.Refused(err, 1)
}

// pinnedDigest is the digest e.ImageRef names now.
func pinnedDigest(ctx context.Context, e *Env) (name.Digest, error) {
	im, err := registry.Pin(ctx, "web", e.ImageRef, registry.Options{Client: e.Client})
	if err != nil {
		return name.Digest{}, err
	}
	return name.NewDigest(im.Repository + "@" + im.Digest.String())
}

// attest signs an SLSA v1 provenance of d, built from sourceRepo at
// commit, with the release key, and pushes it as cosign attest
// --tlog-upload=false does: a DSSE envelope in the sha256-<hex>.att image.
func attest(ctx context.Context, e *Env, d name.Digest, commit string) error {
	sv, err := signature.LoadSigner(ctx, e.Key, nil)
	if err != nil {
		return err
	}
	hex := d.DigestStr()[len("sha256:"):]
	statement, err := json.Marshal(map[string]any{
		"_type":         provenance.StatementV1,
		"predicateType": provenance.SLSAv1,
		"subject":       []map[string]any{{"name": d.Context().Name(), "digest": map[string]string{"sha256": hex}}},
		"predicate": map[string]any{"buildDefinition": map[string]any{
			"buildType":            provenance.BuildTypeGitHubActions,
			"externalParameters":   map[string]any{"workflow": map[string]any{"repository": sourceRepo, "ref": "refs/heads/main", "path": ".github/workflows/release.yml"}},
			"resolvedDependencies": []map[string]any{{"uri": "git+" + sourceRepo + "@refs/heads/main", "digest": map[string]string{"gitCommit": commit}}},
		}},
	})
	if err != nil {
		return err
	}
	env, err := dsse.WrapSigner(sv, types.IntotoPayloadType).SignMessage(bytes.NewReader(statement))
	if err != nil {
		return err
	}
	att, err := static.NewAttestation(env, static.WithLayerMediaType(types.DssePayloadType))
	if err != nil {
		return err
	}
	o := ociremote.WithRemoteOptions(remote.WithContext(ctx), remote.WithTransport(e.Client.Transport()))
	se, err := ociremote.SignedEntity(d, o)
	if err != nil {
		return err
	}
	if se, err = mutate.AttachAttestationToEntity(se, att); err != nil {
		return err
	}
	return ociremote.WriteAttestations(d.Context(), se, o)
}
