package provenance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	ssldsse "github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// inTotoPayloadType is the DSSE payload type of an in-toto statement.
const inTotoPayloadType = "application/vnd.in-toto+json"

// Options configure a Verifier.
type Options struct {
	// Trust says whose attestations count: the key the builder signs
	// with, or its keyless identity with a trusted root (see
	// signature.Options). Keyless attestations must carry their
	// transparency-log proof, verified offline, unless Trust.IgnoreTlog.
	Trust signature.Options
	// Remote are go-containerregistry options for the registry (the
	// shared transport, a keychain). Only Verify uses the registry.
	Remote []remote.Option
	// Logger receives debug logs; nil is silent.
	Logger *slog.Logger
}

// Verifier verifies provenance attestations. It is safe for concurrent
// use.
type Verifier struct {
	opt  Options
	co   *cosign.CheckOpts
	pull *remote.Puller
	log  *slog.Logger
}

// New returns a Verifier, or an error for trust options that do not make
// sense (signature.Options.Check).
func New(o Options) (*Verifier, error) {
	if err := o.Trust.Check(); err != nil {
		return nil, err
	}
	co := o.Trust.CheckOpts()
	co.Offline = true      // never look an entry up in Rekor: proofs are verified offline
	co.ClaimVerifier = nil // the statement is checked here, each check a finding of its own
	v := &Verifier{opt: o, co: co, log: o.Logger}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if v.pull, err = remote.NewPuller(o.Remote...); err != nil {
		return nil, err
	}
	return v, nil
}

// Builder describes whose attestations count, for reports: "key " and
// the key's fingerprint, or the keyless identity.
func (v *Verifier) Builder() string { return v.opt.Trust.Want() }

// target is one digest of an image whose provenance is checked.
type target struct {
	image    *manifest.Image
	digest   manifest.Digest
	what     string // "index", "manifest" or a platform
	required bool   // the image's pinned digest: it must have a provenance
}

func (t target) subject() string {
	return "image " + t.image.Name + " " + t.what + " " + t.digest.String()
}

// targets are the digests of im: its pinned digest (required) and, for an
// index, each platform manifest (checked when it has attestations).
func targets(im *manifest.Image) []target {
	what := "manifest"
	if isIndex(im) {
		what = "index"
	}
	out := []target{{image: im, digest: im.Digest, what: what, required: true}}
	for _, p := range im.Platforms {
		if p.Digest != im.Digest {
			out = append(out, target{image: im, digest: p.Digest, what: p.String()})
		}
	}
	return out
}

func isIndex(im *manifest.Image) bool {
	for _, p := range im.Platforms {
		if p.Digest != im.Digest {
			return true
		}
	}
	return false
}

// checkSource refuses a release source that names no repository or no
// commit: there would be nothing to bind the provenance to.
func checkReleaseSource(src *manifest.BuildSource) error {
	if !src.Bindable() {
		return &manifest.ValidationError{Field: "release.source", Reason: "provenance is checked against the release's source repository and commit, and the release names no repository and commit"}
	}
	return nil
}

// Verify finds, in the registry, the provenance attestations of every
// image's digests and checks them against src, the release's source (see
// the package documentation). It returns the attestations that passed
// (every one that did, for each digest), as material to embed in the
// manifest, or the refusals (*Error, refusals first) and could-not-verify
// errors (*verdict.UnavailableError) joined. A src without a repository
// and commit is a *manifest.ValidationError, before any request.
func (v *Verifier) Verify(ctx context.Context, images []manifest.Image, src *manifest.BuildSource) ([]manifest.EmbeddedAttestation, error) {
	if err := checkReleaseSource(src); err != nil {
		return nil, err
	}
	var out []manifest.EmbeddedAttestation
	err := each(images, func(t target) error {
		found, err := v.fetch(ctx, t.image.Repository, t.digest)
		if err != nil {
			return err
		}
		passed, err := v.check(ctx, t, found, src)
		out = append(out, passed...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// VerifyEmbedded checks the images of m from the attestations embedded in
// m alone (m.Verification.Attestations), against m's own digests and
// m.Release.Source: it sends no request to any registry. Every image's
// pinned digest needs an embedded attestation that passes; errors are as
// for Verify, and a manifest without a source repository and commit is a
// *manifest.ValidationError. Callers verify m's own signature first: the
// material then cannot be stripped or swapped.
func (v *Verifier) VerifyEmbedded(ctx context.Context, m *manifest.Manifest) error {
	if err := checkReleaseSource(m.Release.Source); err != nil {
		return err
	}
	byDigest := map[manifest.Digest][]manifest.EmbeddedAttestation{}
	if m.Verification != nil {
		for _, a := range m.Verification.Attestations {
			byDigest[a.Digest] = append(byDigest[a.Digest], a)
		}
	}
	return each(m.Images, func(t target) error {
		_, err := v.check(ctx, t, byDigest[t.digest], m.Release.Source)
		return err
	})
}

// each runs fn on every target of every image and joins the errors,
// refusals first, so that errors.As picks a refusal when there is one.
func each(images []manifest.Image, fn func(target) error) error {
	var refusals, others []error
	for i := range images {
		for _, t := range targets(&images[i]) {
			if err := fn(t); err != nil {
				if verdict.IsMismatch(err) {
					refusals = append(refusals, err)
				} else {
					others = append(others, err)
				}
			}
		}
	}
	return errors.Join(append(refusals, others...)...)
}

// check returns the attestations of found that pass every check for t,
// or the refusal of the one that came closest. A target that is not
// required and has no attestation passes with none.
func (v *Verifier) check(ctx context.Context, t target, found []manifest.EmbeddedAttestation, src *manifest.BuildSource) ([]manifest.EmbeddedAttestation, error) {
	if len(found) == 0 {
		if !t.required {
			return nil, nil
		}
		return nil, &Error{Subject: t.subject(), Check: CheckMissing, Reason: "no provenance attestation (neither a cosign attestation tag nor an OCI referrer)", Want: "an SLSA provenance signed by " + v.Builder()}
	}
	var passed []manifest.EmbeddedAttestation
	var best *Error
	for _, a := range found {
		e := v.checkOne(ctx, a, t.digest, src)
		switch {
		case e == nil:
			passed = append(passed, a)
			continue
		case !t.required && !builderProvenance(e.Check):
			continue // a platform manifest is bound through its index
		}
		if best == nil || rank[e.Check] > rank[best.Check] {
			best = e
		}
	}
	if best == nil && !t.required {
		return passed, nil
	}
	if len(passed) > 0 {
		v.log.Debug("provenance verified", "image", t.image.Name, "digest", t.digest, "attestations", len(passed), "of", len(found))
		return passed, nil
	}
	best.Subject, best.Found = t.subject(), len(found)
	if len(found) > 1 {
		best.Reason = fmt.Sprintf("none of %d attestations passes; the closest: %s", len(found), best.Reason)
	}
	return nil, best
}

// builderProvenance reports whether an attestation that failed check c
// refuses a platform manifest: a statement signed by the builder about
// another artifact (subject), or an SLSA provenance of another source
// (repository, commit). Another signer's attestation, a payload that is
// not a statement, or the builder's statement of another kind (an SBOM, a
// scan) says nothing about where the platform was built.
func builderProvenance(c Check) bool {
	return c == CheckSubject || c == CheckRepository || c == CheckCommit
}

// checkOne verifies one attestation's signature, then its statement.
func (v *Verifier) checkOne(ctx context.Context, a manifest.EmbeddedAttestation, d manifest.Digest, src *manifest.BuildSource) *Error {
	payload, err := v.verifySignature(ctx, a, d)
	if err != nil {
		return &Error{Check: CheckSignature, Reason: "the attestation does not verify", Want: "signed by " + v.Builder(), Err: err}
	}
	return checkStatement(payload, d, src)
}

// verifySignature verifies a's envelope and returns its payload, the
// signed in-toto statement.
func (v *Verifier) verifySignature(ctx context.Context, a manifest.EmbeddedAttestation, d manifest.Digest) ([]byte, error) {
	switch a.MediaType {
	case manifest.AttestationDSSE:
		att, env, err := dsseAttestation(a)
		if err != nil {
			return nil, err
		}
		h, err := v1.NewHash(d.String())
		if err != nil {
			return nil, err
		}
		if _, err := cosign.VerifyBlobAttestation(ctx, att, h, v.co); err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(env.Payload)
	case manifest.AttestationBundle:
		var b sgbundle.Bundle
		if err := b.UnmarshalJSON(a.Content); err != nil {
			return nil, fmt.Errorf("the Sigstore bundle does not parse: %w", err)
		}
		env := b.GetDsseEnvelope()
		if env == nil {
			return nil, errors.New("the Sigstore bundle holds no DSSE envelope")
		}
		if env.GetPayloadType() != inTotoPayloadType {
			return nil, fmt.Errorf("the envelope's payload type is %q, not %q", env.GetPayloadType(), inTotoPayloadType)
		}
		// The subject is checked after the signature, as a finding of its
		// own (checkStatement), not by sigstore-go's artifact policy.
		if _, err := cosign.VerifyNewBundle(ctx, v.co, sgverify.WithoutArtifactUnsafe(), &b); err != nil {
			return nil, err
		}
		return env.GetPayload(), nil
	}
	return nil, fmt.Errorf("unknown attestation form %q", a.MediaType)
}

// dsseAttestation is a as cosign's attestation type, with its
// certificate, chain, Rekor bundle and timestamp, and a's envelope, parsed
// once.
func dsseAttestation(a manifest.EmbeddedAttestation) (oci.Signature, *ssldsse.Envelope, error) {
	var env ssldsse.Envelope
	if err := json.Unmarshal(a.Content, &env); err != nil {
		return nil, nil, fmt.Errorf("the DSSE envelope does not parse: %w", err)
	}
	opts, err := imagesig.Material{Certificate: a.Certificate, Chain: a.Chain, Bundle: a.Bundle, RFC3161Timestamp: a.RFC3161Timestamp}.Options()
	if err != nil {
		return nil, nil, err
	}
	opts = append(opts, static.WithLayerMediaType(manifest.AttestationDSSE))
	att, err := static.NewAttestation(a.Content, opts...)
	return att, &env, err
}
