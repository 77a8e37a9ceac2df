package signature_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
)

const (
	ghIssuer   = "https://token.actions.githubusercontent.com"
	ghWorkflow = "https://github.com/lockstep-dev/store/.github/workflows/release.yml@refs/heads/main"
)

// TestKeyless checks the identity, issuer and chain checks of keyless
// verification offline, on certificates from a CA made here and a trusted
// root file that names it.
func TestKeyless(t *testing.T) {
	ctx := context.Background()
	ca, otherCA := sigtest.NewCA(t), sigtest.NewCA(t)
	tr, err := signature.LoadTrustedRoot(sigtest.WriteTrustedRoot(t, ca))
	if err != nil {
		t.Fatal(err)
	}
	raw := testManifest(t)
	bundle := func(ca *sigtest.CA, identity, issuer string) []byte {
		sv, cert := ca.Leaf(t, identity, issuer)
		sig, err := signature.Sign(ctx, sv, raw, signature.SignOptions{Certificate: cert})
		if err != nil {
			t.Fatal(err)
		}
		return sig.Bundle
	}
	ghBundle := bundle(ca, ghWorkflow, ghIssuer)
	for _, tc := range []struct {
		name   string
		bundle []byte
		id     signature.Identity
		want   string // "" accepts
	}{
		{"exact identity and issuer", ghBundle, signature.Identity{Subject: ghWorkflow, Issuer: ghIssuer}, ""},
		{"identity regexp", ghBundle, signature.Identity{SubjectRegexp: `^https://github\.com/lockstep-dev/store/\.github/workflows/release\.yml@refs/heads/main$`, Issuer: ghIssuer}, ""},
		{"identity regexp for the org", ghBundle, signature.Identity{SubjectRegexp: `^https://github\.com/lockstep-dev/`, Issuer: ghIssuer}, ""},
		{"issuer regexp", ghBundle, signature.Identity{Subject: ghWorkflow, IssuerRegexp: `^https://token\.actions\.githubusercontent\.com$`}, ""},
		{"email identity", bundle(ca, "release@lockstep.dev", "https://accounts.google.com"), signature.Identity{Subject: "release@lockstep.dev", Issuer: "https://accounts.google.com"}, ""},
		{"another workflow", ghBundle, signature.Identity{Subject: strings.Replace(ghWorkflow, "release.yml", "pr.yml", 1), Issuer: ghIssuer}, "bundle does not verify"},
		{"another branch", bundle(ca, strings.Replace(ghWorkflow, "refs/heads/main", "refs/heads/evil", 1), ghIssuer), signature.Identity{Subject: ghWorkflow, Issuer: ghIssuer}, "bundle does not verify"},
		{"another issuer", ghBundle, signature.Identity{Subject: ghWorkflow, Issuer: "https://accounts.google.com"}, "bundle does not verify"},
		{"issuer regexp that does not match", ghBundle, signature.Identity{Subject: ghWorkflow, IssuerRegexp: `^https://accounts\.google\.com$`}, "bundle does not verify"},
		{"identity regexp of another org", ghBundle, signature.Identity{SubjectRegexp: `^https://github\.com/evil/`, Issuer: ghIssuer}, "bundle does not verify"},
		{"the right identity from an untrusted CA", bundle(otherCA, ghWorkflow, ghIssuer), signature.Identity{Subject: ghWorkflow, Issuer: ghIssuer}, "bundle does not verify"},
		{"a keyed bundle", func() []byte {
			s, _ := signature.Sign(ctx, sigtest.Key(t), raw, signature.SignOptions{Bundle: true})
			return s.Bundle
		}(), signature.Identity{Subject: ghWorkflow, Issuer: ghIssuer}, "bundle does not verify"},
	} {
		v, err := signature.NewVerifier(signature.Options{Identity: &tc.id, TrustedRoot: tr, IgnoreTlog: true, IgnoreSCT: true})
		if err != nil {
			t.Fatal(err)
		}
		err = v.Verify(ctx, signed(t, raw, nil, tc.bundle))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Verify = %v, want nil", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: Verify = nil, want a refusal", tc.name)
		case tc.want != "" && (!strings.Contains(err.Error(), tc.want) || !verdict.IsMismatch(err)):
			t.Errorf("%s: Verify = %v, want a mismatch saying %q", tc.name, err, tc.want)
		}
	}

	// A keyless verifier needs the bundle: a bare signature is refused, and
	// the bundle over other bytes too.
	v, err := signature.NewVerifier(signature.Options{Identity: &signature.Identity{Subject: ghWorkflow, Issuer: ghIssuer}, TrustedRoot: tr, IgnoreTlog: true, IgnoreSCT: true})
	if err != nil {
		t.Fatal(err)
	}
	sv, _ := ca.Leaf(t, ghWorkflow, ghIssuer)
	sig, _ := signature.Sign(ctx, sv, raw, signature.SignOptions{})
	if err := v.Verify(ctx, signed(t, raw, sig.Base64, nil)); err == nil || !strings.Contains(err.Error(), "needs a Sigstore bundle") {
		t.Errorf("keyless Verify(bare signature) = %v, want a refusal asking for a bundle", err)
	}
	changed := flip(raw, strings.Index(string(raw), "store-web")+1)
	if err := v.Verify(ctx, signed(t, changed, nil, ghBundle)); err == nil {
		t.Error("keyless Verify(other bytes) = nil, want a refusal")
	}

	// Without IgnoreTlog, a bundle with no transparency-log entry is
	// refused: a Fulcio certificate lives ten minutes, and only the log's
	// timestamp says it was valid when it signed.
	strict, err := signature.NewVerifier(signature.Options{Identity: &signature.Identity{Subject: ghWorkflow, Issuer: ghIssuer}, TrustedRoot: tr, IgnoreSCT: true})
	if err != nil {
		t.Fatal(err)
	}
	var se *signature.Error
	if err := strict.Verify(ctx, signed(t, raw, nil, ghBundle)); !errors.As(err, &se) {
		t.Errorf("Verify(no tlog entry) = %v, want a *signature.Error", err)
	}
}
