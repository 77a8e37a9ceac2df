package imagesig

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/sigstore/cosign/v2/pkg/cosign/bundle"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
)

// Embed reads from the registry the signatures of each image's index and
// every platform manifest, verifies them, and returns those that verify as
// material to embed in the manifest (Manifest.Verification). The digests
// the policy requires must verify, as in Verify; a platform it does not
// require may go unsigned. Record embeds the result and signs the
// manifest; VerifyEmbedded then needs no registry.
func (v *Verifier) Embed(ctx context.Context, images []manifest.Image) (*manifest.Verification, error) {
	out := &manifest.Verification{}
	seen := map[manifest.Digest]bool{}
	err := v.each(images, func(im *manifest.Image, t Target) error {
		sigs, err := v.fetch(ctx, im.Repository, t.Digest)
		if err != nil {
			return err
		}
		s, err := v.verifyOne(ctx, subject(im, t), t.Digest, sigs)
		if err != nil {
			return err
		}
		seen[t.Digest] = true
		return appendEmbedded(out, t.Digest, s)
	})
	if err != nil {
		return nil, err
	}
	// Also embed what the policy does not require, so that a consumer
	// with a stricter policy can still verify from the manifest alone.
	for i := range images {
		im := &images[i]
		for _, t := range allTargets(im) {
			if seen[t.Digest] {
				continue
			}
			seen[t.Digest] = true
			sigs, err := v.fetch(ctx, im.Repository, t.Digest)
			if err != nil {
				return nil, err
			}
			if s, err := v.verifyOne(ctx, subject(im, t), t.Digest, sigs); err == nil {
				if err := appendEmbedded(out, t.Digest, s); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// allTargets is every digest of im: the index and each platform.
func allTargets(im *manifest.Image) []Target {
	out := []Target{{Digest: im.Digest, What: "index"}}
	if !isIndex(im) {
		out[0].What = "image"
		return out
	}
	for _, p := range im.Platforms {
		out = append(out, Target{Digest: p.Digest, What: p.String()})
	}
	return out
}

func appendEmbedded(out *manifest.Verification, d manifest.Digest, s oci.Signature) error {
	e, err := embedded(d, s)
	if err != nil {
		return fmt.Errorf("embedding the signature of %s: %w", d, err)
	}
	out.Signatures = append(out.Signatures, *e)
	return nil
}

func embedded(d manifest.Digest, s oci.Signature) (*manifest.EmbeddedSignature, error) {
	payload, err := s.Payload()
	if err != nil {
		return nil, err
	}
	b64, err := s.Base64Signature()
	if err != nil {
		return nil, err
	}
	mat, err := MaterialOf(s)
	if err != nil {
		return nil, err
	}
	return &manifest.EmbeddedSignature{Digest: d, Payload: base64.StdEncoding.EncodeToString(payload), Signature: b64,
		Certificate: mat.Certificate, Chain: mat.Chain, Bundle: mat.Bundle, RFC3161Timestamp: mat.RFC3161Timestamp}, nil
}

// Material is what cosign keeps beside a signature or attestation layer's
// payload, in the layer's annotations: the certificate and chain (PEM) of
// a keyless signer, the Rekor bundle and the RFC 3161 timestamp (JSON).
// Embedded signatures and attestations (verify/provenance) carry it.
type Material struct {
	Certificate, Chain       string
	Bundle, RFC3161Timestamp []byte
}

// MaterialOf reads s's material.
func MaterialOf(s oci.Signature) (Material, error) {
	var m Material
	cert, err := s.Cert()
	if err != nil {
		return m, err
	}
	if cert != nil {
		pem, err := cryptoutils.MarshalCertificateToPEM(cert)
		if err != nil {
			return m, err
		}
		m.Certificate = string(pem)
		chain, err := s.Chain()
		if err != nil {
			return m, err
		}
		if len(chain) > 0 {
			pem, err := cryptoutils.MarshalCertificatesToPEM(chain)
			if err != nil {
				return m, err
			}
			m.Chain = string(pem)
		}
	}
	if rb, err := s.Bundle(); err != nil {
		return m, err
	} else if rb != nil {
		if m.Bundle, err = json.Marshal(rb); err != nil {
			return m, err
		}
	}
	if ts, err := s.RFC3161Timestamp(); err != nil {
		return m, err
	} else if ts != nil {
		if m.RFC3161Timestamp, err = json.Marshal(ts); err != nil {
			return m, err
		}
	}
	return m, nil
}

// Options are m as cosign's static layer options; material that does not
// parse is an error.
func (m Material) Options() ([]static.Option, error) {
	var opts []static.Option
	if m.Certificate != "" {
		for what, p := range map[string]string{"certificate": m.Certificate, "chain": m.Chain} {
			if p == "" {
				continue
			}
			if certs, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(p)); err != nil || len(certs) == 0 {
				return nil, fmt.Errorf("%s is not PEM certificates: %v", what, err)
			}
		}
		opts = append(opts, static.WithCertChain([]byte(m.Certificate), []byte(m.Chain)))
	}
	if len(m.Bundle) > 0 {
		var rb bundle.RekorBundle
		if err := json.Unmarshal(m.Bundle, &rb); err != nil {
			return nil, fmt.Errorf("rekor bundle: %w", err)
		}
		opts = append(opts, static.WithBundle(&rb))
	}
	if len(m.RFC3161Timestamp) > 0 {
		var ts bundle.RFC3161Timestamp
		if err := json.Unmarshal(m.RFC3161Timestamp, &ts); err != nil {
			return nil, fmt.Errorf("rfc3161 timestamp: %w", err)
		}
		opts = append(opts, static.WithRFC3161Timestamp(&ts))
	}
	return opts, nil
}

// VerifyEmbedded verifies the images of m from the signature material
// embedded in m alone: it sends no request to any registry. Every digest
// the policy requires must have an embedded signature that verifies;
// material that does not parse is a refusal. Errors are as for Verify.
// Callers verify m's own signature first: the embedded material then
// cannot be stripped, and it cannot be forged in any case.
func (v *Verifier) VerifyEmbedded(ctx context.Context, m *manifest.Manifest) error {
	byDigest := map[manifest.Digest][]manifest.EmbeddedSignature{}
	if m.Verification != nil {
		for _, e := range m.Verification.Signatures {
			byDigest[e.Digest] = append(byDigest[e.Digest], e)
		}
	}
	return v.each(m.Images, func(im *manifest.Image, t Target) error {
		key := v.cacheKey(t.Digest)
		if v.opt.Cache != nil && v.opt.Cache.Has(key) {
			return nil
		}
		var sigs []oci.Signature
		for i, e := range byDigest[t.Digest] {
			s, err := fromEmbedded(e)
			if err != nil {
				return &signature.Error{Subject: subject(im, t), Reason: fmt.Sprintf("embedded signature %d does not parse", i), Want: v.opt.Trust.Want(), Err: err}
			}
			sigs = append(sigs, s)
		}
		if _, err := v.verifyOne(ctx, subject(im, t), t.Digest, sigs); err != nil {
			return err
		}
		v.remember(t.Digest)
		return nil
	})
}

func fromEmbedded(e manifest.EmbeddedSignature) (oci.Signature, error) {
	payload, err := base64.StdEncoding.DecodeString(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	if _, err := base64.StdEncoding.DecodeString(e.Signature); err != nil || e.Signature == "" {
		return nil, fmt.Errorf("signature is not base64: %v", err)
	}
	opts, err := Material{Certificate: e.Certificate, Chain: e.Chain, Bundle: e.Bundle, RFC3161Timestamp: e.RFC3161Timestamp}.Options()
	if err != nil {
		return nil, err
	}
	return static.NewSignature(payload, e.Signature, opts...)
}
