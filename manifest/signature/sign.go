package signature

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"

	cbundle "github.com/sigstore/cosign/v2/pkg/cosign/bundle"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/options"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/lockstep-dev/lockstep/verdict"
)

// Signature is what signing a manifest produces.
type Signature struct {
	// Base64 is the base64 signature over the manifest's bytes, the
	// contents of MANIFEST.sig (no trailing newline, as cosign writes it).
	Base64 []byte
	// Bundle is a Sigstore bundle (v0.3 JSON) for the same signature, when
	// one was asked for: a message signature (SHA-256 digest of the
	// manifest) and the key's hint, with no transparency-log entry.
	Bundle []byte
}

// SignOptions configure Sign.
type SignOptions struct {
	// Bundle asks for a Sigstore bundle beside the base64 signature.
	Bundle bool
	// Certificate, when set, is the signer's certificate (its public key
	// must be the signer's): the bundle then carries it instead of a key
	// hint, as a keyless bundle does, and Bundle is implied. For a private
	// CA; SignKeyless gets a certificate from Fulcio.
	Certificate *x509.Certificate
}

// Sign signs raw, the manifest file's exact bytes, with sv. A signer that
// fails (a KMS that cannot be reached) is an *verdict.UnavailableError.
func Sign(ctx context.Context, sv sigsig.SignerVerifier, raw []byte, opt SignOptions) (*Signature, error) {
	sig, err := sv.SignMessage(bytes.NewReader(raw), options.WithContext(ctx))
	if err != nil {
		return nil, verdict.Unavailable("signer", fmt.Errorf("signing: %w", err))
	}
	out := &Signature{Base64: []byte(base64.StdEncoding.EncodeToString(sig))}
	if opt.Bundle || opt.Certificate != nil {
		pub, err := sv.PublicKey(options.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("reading the public key: %w", err)
		}
		if out.Bundle, err = messageBundle(pub, opt.Certificate, raw, sig); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// messageBundle makes the Sigstore bundle for a signature over raw, the
// shape `cosign sign-blob --new-bundle-format --key` writes: with the key's
// hint, or with cert where there is one.
func messageBundle(pub any, cert *x509.Certificate, raw, sig []byte) ([]byte, error) {
	var hint string
	var rawCert []byte
	if cert != nil {
		rawCert = cert.Raw
	} else {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, fmt.Errorf("encoding the public key: %w", err)
		}
		h := sha256.Sum256(der)
		hint = base64.StdEncoding.EncodeToString(h[:])
	}
	b, err := cbundle.MakeProtobufBundle(hint, rawCert, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("making the bundle: %w", err)
	}
	sum := sha256.Sum256(raw)
	b.Content = &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
		MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
		Signature:     sig,
	}}
	out, err := protojson.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encoding the bundle: %w", err)
	}
	return out, nil
}
