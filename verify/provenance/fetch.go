package provenance

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/oci"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// maxBundle caps the size of a referrer's bundle layer that is read.
const maxBundle = 4 << 20

// fetch reads every attestation of repo@d from the registry: the layers
// of cosign's attestation image (`sha256-<hex>.att`) and the Sigstore
// bundles among its OCI referrers. None is an empty list; a registry that
// cannot be read is a *verdict.UnavailableError.
func (v *Verifier) fetch(ctx context.Context, repo string, d manifest.Digest) ([]manifest.EmbeddedAttestation, error) {
	r, err := name.NewRepository(repo)
	if err != nil {
		return nil, &manifest.ValidationError{Field: "images.repository", Reason: fmt.Sprintf("%q: %v", repo, err), Err: err}
	}
	dep := "registry " + r.RegistryStr()
	ropts := append(append([]remote.Option(nil), v.opt.Remote...), remote.WithContext(ctx), remote.Reuse(v.pull))
	dig := r.Digest(d.String())
	tagged, err := attestationTag(dig, d, ropts)
	if err != nil {
		return nil, verdict.Unavailable(dep, err)
	}
	referred, err := referrers(dig, d, ropts)
	if err != nil {
		return nil, verdict.Unavailable(dep, err)
	}
	v.log.Debug("provenance attestations found", "repository", repo, "digest", d, "tag", len(tagged), "referrers", len(referred))
	return append(tagged, referred...), nil
}

// attestationTag reads the DSSE envelopes of cosign's attestation image
// of d, whose digest is dg.
func attestationTag(d name.Digest, dg manifest.Digest, ropts []remote.Option) ([]manifest.EmbeddedAttestation, error) {
	opts := []ociremote.Option{ociremote.WithRemoteOptions(ropts...)}
	tag, err := ociremote.AttestationTag(d, opts...)
	if err != nil {
		return nil, err
	}
	atts, err := ociremote.Signatures(tag, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading attestations %s: %w", tag, err)
	}
	list, err := atts.Get()
	if err != nil {
		return nil, fmt.Errorf("reading attestations %s: %w", tag, err)
	}
	var out []manifest.EmbeddedAttestation
	for _, s := range list {
		a, err := fromLayer(dg, s)
		if err != nil {
			return nil, fmt.Errorf("reading attestations %s: %w", tag, err)
		}
		out = append(out, *a)
	}
	return out, nil
}

// fromLayer is one layer of the attestation image of dg as embedded
// material.
func fromLayer(dg manifest.Digest, s oci.Signature) (*manifest.EmbeddedAttestation, error) {
	content, err := s.Payload()
	if err != nil {
		return nil, err
	}
	a := &manifest.EmbeddedAttestation{Digest: dg, MediaType: manifest.AttestationDSSE, Content: content}
	mat, err := imagesig.MaterialOf(s)
	if err != nil {
		return nil, err
	}
	a.Certificate, a.Chain, a.Bundle, a.RFC3161Timestamp = mat.Certificate, mat.Chain, mat.Bundle, mat.RFC3161Timestamp
	return a, nil
}

// referrers reads the Sigstore bundles that refer to d, whose digest is
// dg (the referrers API,
// or go-containerregistry's fallback to the referrers tag schema).
// Referrers of other types (SBOMs, signatures) are left alone.
func referrers(d name.Digest, dg manifest.Digest, ropts []remote.Option) ([]manifest.EmbeddedAttestation, error) {
	idx, err := remote.Referrers(d, ropts...)
	if err != nil {
		return nil, fmt.Errorf("listing the referrers of %s: %w", d, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("listing the referrers of %s: %w", d, err)
	}
	var out []manifest.EmbeddedAttestation
	for _, desc := range im.Manifests {
		if !maybeBundle(desc.ArtifactType) {
			continue
		}
		content, err := bundleLayer(d.Context().Digest(desc.Digest.String()), ropts)
		if err != nil {
			return nil, err
		}
		if content != nil {
			out = append(out, manifest.EmbeddedAttestation{Digest: dg, MediaType: manifest.AttestationBundle, Content: content})
		}
	}
	return out, nil
}

// maybeBundle reports whether a referrer of artifactType may be a
// Sigstore bundle: its type says so, or says nothing (go-containerregistry
// takes the config's media type, which cosign leaves empty, for the
// artifact type, where the OCI spec reads the manifest's artifactType
// first); the referrer's layer then decides.
func maybeBundle(artifactType string) bool {
	switch {
	case strings.HasPrefix(artifactType, "application/vnd.dev.sigstore.bundle"):
		return true
	case artifactType == "", artifactType == "application/vnd.oci.empty.v1+json":
		return true
	}
	return false
}

// bundleLayer reads the one bundle layer of a referrer; nil when it
// holds none (another kind of artifact under the same type).
func bundleLayer(ref name.Digest, ropts []remote.Option) ([]byte, error) {
	img, err := remote.Image(ref, ropts...)
	if err != nil {
		return nil, fmt.Errorf("reading referrer %s: %w", ref, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("reading referrer %s: %w", ref, err)
	}
	if len(m.Layers) != 1 || !strings.HasPrefix(string(m.Layers[0].MediaType), "application/vnd.dev.sigstore.bundle") {
		return nil, nil
	}
	return readLayer(img, m.Layers[0].Digest)
}

func readLayer(img v1.Image, h v1.Hash) ([]byte, error) {
	l, err := img.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", h, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxBundle+1))
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", h, err)
	}
	if len(b) > maxBundle {
		return nil, fmt.Errorf("bundle %s is over %d bytes", h, maxBundle)
	}
	return b, nil
}
