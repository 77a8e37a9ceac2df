package sigtest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/cosign/v2/pkg/types"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
)

// Provenance returns an in-toto statement of SLSA provenance v1 about
// the digests subjects, built from repo (a "git+https://…@refs/…" URI, as
// GitHub's build-provenance attestations write it) at commit.
func Provenance(t testing.TB, repo, commit string, subjects ...name.Digest) []byte {
	t.Helper()
	type subject struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	}
	var subs []subject
	for _, d := range subjects {
		h := d.DigestStr()
		subs = append(subs, subject{Name: d.Context().Name(), Digest: map[string]string{"sha256": h[len("sha256:"):]}})
	}
	st := map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       subs,
		"predicateType": "https://slsa.dev/provenance/v1",
		"predicate":     SLSAv1Predicate(repo, commit),
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SLSAv1Predicate is an SLSA v1 provenance predicate as GitHub's
// actions/attest-build-provenance writes it, for repo at commit.
func SLSAv1Predicate(repo, commit string) map[string]any {
	return map[string]any{
		"buildDefinition": map[string]any{
			"buildType":          "https://actions.github.io/buildtypes/workflow/v1",
			"externalParameters": map[string]any{"workflow": map[string]any{"ref": "refs/heads/main", "repository": repo, "path": ".github/workflows/release.yml"}},
			"resolvedDependencies": []map[string]any{
				{"uri": "git+" + repo + "@refs/heads/main", "digest": map[string]string{"gitCommit": commit}},
			},
		},
		"runDetails": map[string]any{
			"builder":  map[string]any{"id": "https://github.com/actions/runner/github-hosted"},
			"metadata": map[string]any{"invocationId": repo + "/actions/runs/1/attempts/1"},
		},
	}
}

// AttestImage signs statement (an in-toto statement) as a DSSE envelope
// with sv and pushes it as `cosign attest --tlog-upload=false` does (a
// layer of the sha256-<hex>.att image, appended to those there). certPEM
// and chainPEM, when set, are attached as a keyless signer's certificate
// and chain; edit, when set, changes the envelope's bytes after signing
// (a tampered attestation).
func AttestImage(t testing.TB, d name.Digest, sv sigsig.SignerVerifier, statement []byte, certPEM, chainPEM []byte, edit func([]byte) []byte, ropts ...remote.Option) {
	t.Helper()
	env, err := dsse.WrapSigner(sv, types.IntotoPayloadType).SignMessage(bytes.NewReader(statement))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		env = edit(env)
	}
	opts := []static.Option{static.WithLayerMediaType(types.DssePayloadType)}
	if certPEM != nil {
		opts = append(opts, static.WithCertChain(certPEM, chainPEM))
	}
	att, err := static.NewAttestation(env, opts...)
	if err != nil {
		t.Fatal(err)
	}
	attach(t, d, func(se oci.SignedEntity) (oci.SignedEntity, error) { return mutate.AttachAttestationToEntity(se, att) }, ociremote.WriteAttestations, ropts)
}
