package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
	"github.com/lockstep-dev/lockstep/verify/provenance"
)

// trustOptions reads the key (from the first of keyFlags that is set) and
// the keyless flags into signature options; set is false when the flags
// name no signer at all.
func trustOptions(ctx context.Context, c flagValues, keyFlags ...string) (o signature.Options, set bool, err error) {
	var key string
	for _, f := range keyFlags {
		if key = c.String(f); key != "" {
			break
		}
	}
	id := &signature.Identity{
		Subject: c.String("certificate-identity"), SubjectRegexp: c.String("certificate-identity-regexp"),
		Issuer: c.String("certificate-oidc-issuer"), IssuerRegexp: c.String("certificate-oidc-issuer-regexp"),
	}
	keyless := *id != signature.Identity{}
	o.IgnoreTlog, o.IgnoreSCT = c.Bool("insecure-ignore-tlog"), c.Bool("insecure-ignore-sct")
	switch {
	case key != "" && keyless:
		return o, true, usage(errors.New("--key and the keyless --certificate-* flags are exclusive"))
	case key != "":
		v, err := signature.LoadVerifier(ctx, key)
		if err != nil {
			return o, true, keyErr(err)
		}
		o.Key = v
	case keyless:
		o.Identity = id
		if o.TrustedRoot, err = trustedRoot(c); err != nil {
			return o, true, err
		}
	default:
		return o, false, nil
	}
	if err := o.Check(); err != nil {
		return o, true, usage(flagged(err, trustOptionFlags))
	}
	return o, true, nil
}

// trustOptionFlags are the flags of signature.Options' fields.
var trustOptionFlags = map[string]string{
	"Identity.Subject": "--certificate-identity", "Identity.SubjectRegexp": "--certificate-identity-regexp",
	"Identity.Issuer": "--certificate-oidc-issuer", "Identity.IssuerRegexp": "--certificate-oidc-issuer-regexp",
	"TrustedRoot": "--trusted-root",
}

// trustedRoot reads --trusted-root, or fetches the public-good instance's
// from Sigstore's TUF repository unless --offline.
func trustedRoot(c flagValues) (root.TrustedMaterial, error) {
	if path := c.String("trusted-root"); path != "" {
		tr, err := signature.LoadTrustedRoot(path)
		if err != nil {
			return nil, usage(err)
		}
		return tr, nil
	}
	if c.Bool("offline") {
		return nil, usage(errors.New("keyless verification with --offline needs --trusted-root FILE"))
	}
	tr, err := cosign.TrustedRoot()
	if err != nil {
		return nil, verdict.Unavailable("Sigstore TUF repository", err)
	}
	return tr, nil
}

// keyErr makes a key that cannot be loaded a usage error (exit 2); a KMS
// that cannot be reached stays a could-not-verify (exit 3).
func keyErr(err error) error {
	var ke *signature.KeyError
	if errors.As(err, &ke) {
		return usage(err)
	}
	return err
}

// verifierFromFlags builds the manifest verifier the trust flags ask for:
// --key PUB, or the keyless --certificate-identity[-regexp] and
// --certificate-oidc-issuer[-regexp] flags (with --trusted-root). With
// --insecure-allow-unsigned, an unsigned manifest is accepted (a wrongly
// signed one still refused when a signer is named; with none, nothing is
// verified), and insecure is true: the caller says so in every report.
// With no signer and no --insecure-allow-unsigned it is a usage error. The
// verifier is never nil when err is nil.
func verifierFromFlags(ctx context.Context, c flagValues) (v manifest.Verifier, insecure bool, err error) {
	o, set, err := trustOptions(ctx, c, "key")
	if err != nil {
		return nil, false, err
	}
	insecure = c.Bool("insecure-allow-unsigned")
	if !set {
		if insecure {
			return signature.AllowUnsigned(nil), true, nil
		}
		return nil, false, usage(errors.New("manifest signatures are verified: pass --key PUB, or --certificate-identity and --certificate-oidc-issuer for keyless, or --insecure-allow-unsigned"))
	}
	sv, err := signature.NewVerifier(o)
	if err != nil {
		return nil, false, usage(err)
	}
	if insecure {
		return signature.AllowUnsigned(sv), true, nil
	}
	return sv, false, nil
}

// imageVerifierFromFlags builds the image-signature verifier of
// imageSignatureFlags: the key from --image-key (alias --verify-key) or
// else --key, or the keyless identity flags; platforms are the platforms
// the release runs (empty: every platform of each image); remote the
// registry options (the shared transport). Naming no signer is a usage
// error.
func imageVerifierFromFlags(ctx context.Context, c flagValues, inv *invocation, platforms []string, remote []remote.Option) (*imagesig.Verifier, error) {
	o, set, err := trustOptions(ctx, c, "image-key", "key")
	if err != nil {
		return nil, err
	}
	if !set {
		return nil, usage(errors.New("image signatures need a signer: --image-key PUB (or --key), or --certificate-identity and --certificate-oidc-issuer"))
	}
	pol, err := imagesig.ParseIndexPolicy(c.String("image-signature-policy"))
	if err != nil {
		return nil, usage(err)
	}
	cache, err := imagesig.NewCache(imagesig.CacheOptions{MaxEntries: c.Int("signature-cache-size"), Dir: c.String("signature-cache-dir")})
	if err != nil {
		return nil, fmt.Errorf("opening --signature-cache-dir: %w", err)
	}
	v, err := imagesig.New(imagesig.Options{
		Trust:  o,
		Policy: imagesig.Policy{Index: pol, Platforms: platforms},
		Remote: remote,
		Cache:  cache,
		Logger: inv.log,
	})
	switch {
	case verdict.IsUnavailable(err):
		return nil, err
	case err != nil:
		return nil, usage(err)
	}
	return v, nil
}

// provenanceVerifierFromFlags builds the provenance verifier: the builder
// from --provenance-key, or the keyless identity flags; remote the
// registry options (record reads the registry, the gate never does).
// Naming no builder is a usage error.
func provenanceVerifierFromFlags(ctx context.Context, c flagValues, inv *invocation, remote []remote.Option) (*provenance.Verifier, error) {
	o, set, err := trustOptions(ctx, c, "provenance-key")
	if err != nil {
		return nil, err
	}
	if !set {
		return nil, usage(errors.New("provenance needs a builder: --provenance-key PUB, or --certificate-identity and --certificate-oidc-issuer"))
	}
	v, err := provenance.New(provenance.Options{Trust: o, Remote: remote, Logger: inv.log})
	if err != nil {
		return nil, usage(err)
	}
	return v, nil
}
