package keyless

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	cbundle "github.com/sigstore/cosign/v2/pkg/cosign/bundle"
	"github.com/sigstore/cosign/v2/pkg/providers"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"

	// The identity-token providers lockstep signs with: GitHub Actions
	// (ACTIONS_ID_TOKEN_REQUEST_URL, with `permissions: id-token: write`),
	// SIGSTORE_ID_TOKEN, and a token file (/var/run/sigstore/cosign/oidc-token).
	_ "github.com/sigstore/cosign/v2/pkg/providers/envvar"
	_ "github.com/sigstore/cosign/v2/pkg/providers/filesystem"
	_ "github.com/sigstore/cosign/v2/pkg/providers/github"

	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
)

// Options configure Sign.
type Options struct {
	// IDToken is the OIDC identity token Fulcio certifies. Empty takes one
	// from the environment: GitHub Actions, SIGSTORE_ID_TOKEN, or the
	// token file cosign reads.
	IDToken string
	// SigningConfig names the Fulcio, Rekor and timestamp services
	// (signing_config.json). Nil takes the public-good instance's from
	// Sigstore's TUF repository.
	SigningConfig *root.SigningConfig
	// TrustedRoot verifies what the services return. Nil takes the
	// public-good instance's from TUF.
	TrustedRoot root.TrustedMaterial
}

// ErrNoIdentity says that no OIDC identity token was given or found in
// the environment.
var ErrNoIdentity = errors.New("no OIDC identity token: in GitHub Actions grant `permissions: id-token: write`, or set SIGSTORE_ID_TOKEN")

// Sign signs raw keylessly and returns the signature and its Sigstore
// bundle (certificate, Rekor entry). A missing token is ErrNoIdentity; a
// service that cannot be reached an *verdict.UnavailableError.
func Sign(ctx context.Context, raw []byte, o Options) (*signature.Signature, error) {
	token := o.IDToken
	if token == "" {
		if !providers.Enabled(ctx) {
			return nil, ErrNoIdentity
		}
		var err error
		if token, err = providers.Provide(ctx, "sigstore"); err != nil {
			return nil, verdict.Unavailable("OIDC provider", fmt.Errorf("getting an identity token: %w", err))
		}
	}
	if token == "" {
		return nil, ErrNoIdentity
	}
	sc, tr := o.SigningConfig, o.TrustedRoot
	var err error
	if sc == nil {
		if sc, err = cosign.SigningConfig(); err != nil {
			return nil, verdict.Unavailable("Sigstore TUF repository", err)
		}
	}
	if tr == nil {
		if tr, err = cosign.TrustedRoot(); err != nil {
			return nil, verdict.Unavailable("Sigstore TUF repository", err)
		}
	}
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		return nil, fmt.Errorf("making an ephemeral key: %w", err)
	}
	b, err := cbundle.SignData(ctx, &sign.PlainData{Data: raw}, kp, token, sc, tr)
	if err != nil {
		return nil, verdict.Unavailable("Fulcio/Rekor", err)
	}
	return fromBundle(b)
}

// fromBundle returns a signature whose Base64 is the bundle's message
// signature, so that MANIFEST.sig is written in keyless mode too.
func fromBundle(b []byte) (*signature.Signature, error) {
	var bundle sgbundle.Bundle
	if err := bundle.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("reading the bundle Fulcio and Rekor produced: %w", err)
	}
	sc, err := bundle.SignatureContent()
	if err != nil {
		return nil, fmt.Errorf("reading the bundle Fulcio and Rekor produced: %w", err)
	}
	ms := sc.MessageSignatureContent()
	if ms == nil {
		return nil, errors.New("the bundle holds no message signature")
	}
	return &signature.Signature{Base64: []byte(base64.StdEncoding.EncodeToString(ms.Signature())), Bundle: b}, nil
}
