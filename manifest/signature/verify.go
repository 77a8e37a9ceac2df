package signature

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// Identity is the keyless signer a certificate must name: its subject
// (the SAN: an email, or a URI such as a GitHub workflow
// "https://github.com/ORG/REPO/.github/workflows/release.yml@refs/heads/main")
// and the OIDC issuer that vouched for it (the Fulcio issuer extension,
// e.g. "https://token.actions.githubusercontent.com"). Each is matched
// exactly, or by a regular expression (Go syntax, unanchored unless you
// anchor it, as in cosign); one of each pair is required.
type Identity struct {
	Subject, SubjectRegexp string
	Issuer, IssuerRegexp   string
}

func (id *Identity) check() error {
	if id.Subject == "" && id.SubjectRegexp == "" {
		return &verdict.OptionError{Option: "Identity.Subject or Identity.SubjectRegexp", Reason: "keyless verification needs one"}
	}
	if id.Issuer == "" && id.IssuerRegexp == "" {
		return &verdict.OptionError{Option: "Identity.Issuer or Identity.IssuerRegexp", Reason: "keyless verification needs one"}
	}
	for _, re := range []string{id.SubjectRegexp, id.IssuerRegexp} {
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("regular expression %q: %w", re, err)
		}
	}
	return nil
}

// String describes the identity for messages.
func (id *Identity) String() string {
	s := id.Subject
	if s == "" {
		s = "~" + id.SubjectRegexp
	}
	i := id.Issuer
	if i == "" {
		i = "~" + id.IssuerRegexp
	}
	return "identity " + s + " from issuer " + i
}

// Options say whom a Verifier trusts. Exactly one of Key and Identity is
// set.
type Options struct {
	// Key is the public key that must have made the signature. A keyed
	// signature needs no transparency-log entry (lockstep's keyed signing
	// uploads none, as `cosign sign-blob --tlog-upload=false`).
	Key sigsig.Verifier
	// Identity is the keyless signer the certificate must name.
	Identity *Identity
	// TrustedRoot holds the Fulcio CAs, Rekor and CT log keys and
	// timestamp authorities a keyless signature is verified against
	// (sigstore's trusted_root.json; see LoadTrustedRoot). Required with
	// Identity; verification with it makes no network call.
	TrustedRoot root.TrustedMaterial
	// IgnoreTlog accepts a keyless signature without a transparency-log
	// entry, checking the certificate's validity at the current time
	// instead (insecure: for private CAs and tests).
	IgnoreTlog bool
	// IgnoreSCT accepts a certificate without a certificate-transparency
	// timestamp (insecure: for private CAs and tests).
	IgnoreSCT bool
}

// Check reports a configuration error in o; a keyless identity without a
// subject or an issuer, or without a trusted root, is a
// *verdict.OptionError naming the missing field.
func (o Options) Check() error {
	switch {
	case o.Key != nil && o.Identity != nil:
		return errors.New("a key and a keyless identity are exclusive")
	case o.Key == nil && o.Identity == nil:
		return errors.New("a key or a keyless identity is required")
	case o.Identity != nil:
		if err := o.Identity.check(); err != nil {
			return err
		}
		if o.TrustedRoot == nil {
			return &verdict.OptionError{Option: "TrustedRoot", Reason: "keyless verification needs one"}
		}
	}
	return nil
}

// Want describes the signer o requires, for messages.
func (o Options) Want() string {
	if o.Key != nil {
		return "key " + Fingerprint(o.Key)
	}
	if o.Identity != nil {
		return o.Identity.String()
	}
	return "nobody"
}

// CheckOpts returns the cosign verification options for o.
func (o Options) CheckOpts() *cosign.CheckOpts {
	co := &cosign.CheckOpts{
		SigVerifier:     o.Key,
		TrustedMaterial: o.TrustedRoot,
		IgnoreTlog:      o.IgnoreTlog || o.Key != nil,
		IgnoreSCT:       o.IgnoreSCT || o.Key != nil,
		ClaimVerifier:   cosign.SimpleClaimVerifier,
	}
	if co.TrustedMaterial == nil {
		co.TrustedMaterial = &root.BaseTrustedMaterial{}
	}
	if id := o.Identity; id != nil {
		co.Identities = []cosign.Identity{{Subject: id.Subject, SubjectRegExp: id.SubjectRegexp, Issuer: id.Issuer, IssuerRegExp: id.IssuerRegexp}}
	}
	return co
}

// Verifier verifies manifest signatures. It is safe for concurrent use.
type Verifier struct {
	opt Options
	co  *cosign.CheckOpts
}

var _ manifest.Verifier = (*Verifier)(nil)

// NewVerifier returns a Verifier for o, or an error for options that do
// not make sense (see Options.Check).
func NewVerifier(o Options) (*Verifier, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	return &Verifier{opt: o, co: o.CheckOpts()}, nil
}

// Verify checks s's signature over s.Raw. With a bundle (s.Bundle), the
// bundle must verify (cosign's Sigstore-bundle verification); with a
// base64 signature (s.Signature) and a key, the signature must verify with
// the key; when both are present both must. Keyless verification needs a
// bundle (it carries the certificate). Every failure is an *Error: no
// signature (wrapping ErrUnsigned), a signature or bundle that does not
// parse, a signature that does not verify (other bytes, another key), a
// certificate that names someone else.
func (v *Verifier) Verify(ctx context.Context, s *manifest.Signed) error {
	subject := "manifest"
	if s.Manifest != nil {
		subject += " " + s.Manifest.ID()
	}
	fail := func(reason string, err error) error {
		return &Error{Subject: subject, Reason: reason, Want: v.opt.Want(), Err: err}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// A sidecar that is there (non-nil) but empty or white space is an
	// invalid signature: only one that is absent is "unsigned".
	if s.Signature == nil && s.Bundle == nil {
		return fail("unsigned: no signature or bundle beside the manifest", ErrUnsigned)
	}
	for _, sc := range s.Sidecars() {
		if sc.Data != nil && manifest.Blank(sc.Data) {
			return fail("the "+sc.Suffix+" file beside the manifest is empty: an invalid signature, not an unsigned manifest", nil)
		}
	}
	if s.Bundle != nil {
		if err := v.verifyBundle(ctx, s.Raw, s.Bundle); err != nil {
			return fail(err.Error(), errors.Unwrap(err))
		}
	}
	if s.Signature != nil {
		if v.opt.Key == nil {
			if s.Bundle == nil {
				return fail("keyless verification needs a Sigstore bundle (MANIFEST.sigstore.json), not a bare signature", nil)
			}
			return nil // the bundle carries the keyless signature
		}
		sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(s.Signature)))
		if err != nil || len(sig) == 0 {
			return fail("signature does not parse (want cosign's base64 signature)", err)
		}
		if err := v.opt.Key.VerifySignature(bytes.NewReader(sig), bytes.NewReader(s.Raw), options.WithContext(ctx)); err != nil {
			return fail("signature does not verify: the manifest's bytes changed since it was signed, or another key signed it", err)
		}
	}
	return nil
}

// reasonError carries a short reason and its cause out of verifyBundle.
type reasonError struct {
	reason string
	err    error
}

func (e *reasonError) Error() string { return e.reason }
func (e *reasonError) Unwrap() error { return e.err }

func (v *Verifier) verifyBundle(ctx context.Context, raw, b []byte) error {
	var bundle sgbundle.Bundle
	if err := bundle.UnmarshalJSON(b); err != nil {
		return &reasonError{"bundle does not parse", err}
	}
	if _, err := cosign.VerifyNewBundle(ctx, v.co, sgverify.WithArtifact(bytes.NewReader(raw)), &bundle); err != nil {
		return &reasonError{"bundle does not verify", err}
	}
	return nil
}

// LoadTrustedRoot reads a Sigstore trusted root (trusted_root.json, as
// `cosign trusted-root create` writes it or the public-good instance's TUF
// repository serves it).
func LoadTrustedRoot(path string) (*root.TrustedRoot, error) {
	tr, err := root.NewTrustedRootFromPath(path)
	if err != nil {
		return nil, fmt.Errorf("reading trusted root %s: %w", path, err)
	}
	return tr, nil
}
