package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/cosign/v2/pkg/types"
	"github.com/sigstore/sigstore/pkg/signature/dsse"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
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
// slsaprovenance1` does: built from sourceRepo at commitV2, signed with
// the builder's key. The demo does it with lockstep's own code (cosign
// need not be installed), and says so: no command line is printed.
func attestBuild(ctx context.Context, e *Env) error {
	d, err := pinnedDigest(ctx, e)
	if err != nil {
		return err
	}
	builder := filepath.Join(e.Dir, "builder")
	if err := os.MkdirAll(builder, 0o755); err != nil {
		return err
	}
	if e.BuilderKey, e.BuilderPublicKey, err = scenario.GenerateKey(builder); err != nil {
		return err
	}
	if err := attest(ctx, e, d, commitV2); err != nil {
		return err
	}
	e.Say("CI attested %s, as `cosign attest --type slsaprovenance1` does: SLSA provenance v1, built from", d.DigestStr())
	e.Say("%s at %s, signed with the builder's key %s, pushed to the registry", sourceRepo, commitV2[:7], e.BuilderKey)
	e.Say("(the demo made the key and the attestation with lockstep's own code, so that cosign need not be installed)")
	return nil
}

// bindProvenance: record --require-provenance binds the image to the
// release's commit: the build's own commit passes, a claim that the image
// is another commit's is refused, and nothing is written.
func bindProvenance(ctx context.Context, e *Env) error {
	if e.BuilderPublicKey == "" {
		// Without CI's attestation there is no builder key: name where
		// it would be, so that record says what it finds there.
		e.BuilderPublicKey = filepath.Join(e.Dir, "builder", "cosign.pub")
	}
	check := func(commit, path string) Ran {
		return e.Lockstep(ctx, "record", "--release", e.Release, "--generation", "3", "--image", "web="+e.ImageRef,
			"--source-repository", sourceRepo, "--source-commit", commit, "--require-provenance", "--provenance-key", e.BuilderPublicKey,
			"--output", path)
	}
	own := filepath.Join(e.Dir, "release-v3.json")
	if err := check(commitV2, own).Expect(0); err != nil {
		return fmt.Errorf("the provenance of the build's own commit was refused: %w", err)
	}
	m, _, err := manifest.ReadFile(own)
	if err != nil {
		return err
	}
	if m.Release.Source == nil || m.Release.Source.Commit != commitV2 {
		return fmt.Errorf("%s does not name the build's commit %s: %+v", own, commitV2, m.Release.Source)
	}
	other := filepath.Join(e.Dir, "release-v3-"+commitV1[:7]+".json")
	if err := check(commitV1, other).Expect(1, "provenance commit", "expected commit "+commitV1); err != nil {
		return fmt.Errorf("a release claiming commit %s for v2's image was not refused for its commit: %w", commitV1[:7], err)
	}
	if _, err := os.Stat(other); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the refused record left %s (%v)", other, err)
	}
	return nil
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
// commit, with the builder's key, and pushes it as cosign attest
// --tlog-upload=false does: a DSSE envelope in the sha256-<hex>.att image.
func attest(ctx context.Context, e *Env, d name.Digest, commit string) error {
	sv, err := signature.LoadSigner(ctx, e.BuilderKey, nil)
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
