package signature_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
)

func testManifest(t testing.TB) []byte {
	t.Helper()
	files := []manifest.File{{Path: "index.html", Size: 5, SHA256: strings.Repeat("b", 64)}}
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion,
		Kind:       manifest.Kind,
		Release:    manifest.Release{Name: "store-web", Generation: 7, CreatedAt: time.Date(2021, 4, 5, 12, 0, 0, 0, time.UTC)},
		Images: []manifest.Image{{
			Name: "web", Ref: "registry.example/store/web:v1", Repository: "registry.example/store/web", Tag: "v1",
			Digest:    manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64)),
			MediaType: "application/vnd.oci.image.manifest.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64",
				Digest: manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64)),
				Config: manifest.MustParseDigest("sha256:" + strings.Repeat("3", 64))}},
		}},
		Assets: manifest.Assets{CDN: []string{"https://cdn.example/store/"}, Files: files, Fingerprint: manifest.Fingerprint(files)},
	}
	b, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signed(t testing.TB, raw, sig, bundle []byte) *manifest.Signed {
	t.Helper()
	s, err := manifest.NewSigned(raw, "test")
	if err != nil {
		t.Fatal(err)
	}
	s.Signature, s.Bundle = sig, bundle
	return s
}

func keyVerifier(t testing.TB, key sigsig.Verifier) *signature.Verifier {
	t.Helper()
	v, err := signature.NewVerifier(signature.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSignVerify(t *testing.T) {
	ctx := context.Background()
	key := sigtest.Key(t)
	raw := testManifest(t)
	sig, err := signature.Sign(ctx, key, raw, signature.SignOptions{Bundle: true})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(sig.Base64, "\n ") {
		t.Errorf("signature %q has white space; cosign writes bare base64", sig.Base64)
	}
	v := keyVerifier(t, key)
	for _, tc := range []struct {
		name        string
		sig, bundle []byte
	}{
		{"signature", sig.Base64, nil},
		{"signature with a trailing newline", append(append([]byte(nil), sig.Base64...), '\n'), nil},
		{"bundle", nil, sig.Bundle},
		{"both", sig.Base64, sig.Bundle},
	} {
		if err := v.Verify(ctx, signed(t, raw, tc.sig, tc.bundle)); err != nil {
			t.Errorf("%s: Verify = %v, want nil", tc.name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x01
	return c
}

// TestRefusals: every way a signature can be wrong is an *Error that
// errors.As also finds as a *verdict.MismatchError (exit 1), with a
// message that says what is wrong.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	key, other := sigtest.Key(t), sigtest.Key(t)
	raw := testManifest(t)
	good, err := signature.Sign(ctx, key, raw, signature.SignOptions{Bundle: true})
	if err != nil {
		t.Fatal(err)
	}
	byOther, err := signature.Sign(ctx, other, raw, signature.SignOptions{Bundle: true})
	if err != nil {
		t.Fatal(err)
	}
	der, _ := base64.StdEncoding.DecodeString(string(good.Base64))
	flippedSig := []byte(base64.StdEncoding.EncodeToString(flip(der, len(der)/2)))
	// The manifest with one byte of a string value changed: still a valid
	// manifest, but other bytes.
	i := bytes.Index(raw, []byte("store-web"))
	changed := flip(raw, i+1)
	v := keyVerifier(t, key)
	for _, tc := range []struct {
		name        string
		raw         []byte
		sig, bundle []byte
		want        string
		unsigned    bool
	}{
		{"unsigned", raw, nil, nil, "unsigned", true},
		{"one byte of the manifest flipped", changed, good.Base64, nil, "signature does not verify", false},
		{"one byte of the signature flipped", raw, flippedSig, nil, "signature does not verify", false},
		{"signed by another key", raw, byOther.Base64, nil, "signature does not verify", false},
		{"signature not base64", raw, []byte("not*base64!"), nil, "signature does not parse", false},
		{"signature empty after trimming", raw, []byte("\n"), nil, "is empty: an invalid signature", false},
		{"signature file empty", raw, []byte{}, nil, "is empty: an invalid signature", false},
		{"bundle file empty", raw, nil, []byte{}, "is empty: an invalid signature", false},
		{"bundle file white space", raw, nil, []byte(" \t\r\n"), "is empty: an invalid signature", false},
		{"good signature, empty bundle", raw, good.Base64, []byte{}, "is empty: an invalid signature", false},
		{"empty signature, good bundle", raw, []byte{}, good.Bundle, "is empty: an invalid signature", false},
		{"signature truncated", raw, good.Base64[:len(good.Base64)/2], nil, "signature", false},
		{"bundle not JSON", raw, nil, []byte("{not json"), "bundle does not parse", false},
		{"bundle empty object", raw, nil, []byte("{}"), "bundle does not parse", false},
		{"bundle of another media type", raw, nil, []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v9+json"}`), "bundle does not parse", false},
		{"bundle by another key", raw, nil, byOther.Bundle, "bundle does not verify", false},
		{"bundle over other bytes", changed, nil, good.Bundle, "bundle does not verify", false},
		{"good signature, bad bundle", raw, good.Base64, []byte("{"), "bundle does not parse", false},
		{"good bundle, bad signature", raw, flippedSig, good.Bundle, "signature does not verify", false},
	} {
		s := &manifest.Signed{Raw: tc.raw, Signature: tc.sig, Bundle: tc.bundle}
		if m, err := manifest.Parse(tc.raw); err == nil {
			s.Manifest = m
		}
		err := v.Verify(ctx, s)
		var se *signature.Error
		var me *verdict.MismatchError
		switch {
		case err == nil:
			t.Errorf("%s: Verify = nil, want a refusal", tc.name)
			continue
		case !errors.As(err, &se):
			t.Errorf("%s: Verify = %T %v, want a *signature.Error", tc.name, err, err)
		case !errors.As(err, &me):
			t.Errorf("%s: %v is not found as a *verdict.MismatchError", tc.name, err)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: Verify = %q, want it to say %q", tc.name, err, tc.want)
		case signature.IsUnsigned(err) != tc.unsigned:
			t.Errorf("%s: IsUnsigned(%v) = %v, want %v", tc.name, err, !tc.unsigned, tc.unsigned)
		}
		if !strings.Contains(err.Error(), "manifest store-web@7") && tc.raw[0] == raw[0] && s.Manifest != nil && s.Manifest.Release.Name == "store-web" {
			t.Errorf("%s: %q does not name the manifest", tc.name, err)
		}
		if !strings.Contains(err.Error(), signature.Fingerprint(key)) {
			t.Errorf("%s: %q does not name the key it wanted", tc.name, err)
		}
	}
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func pkcs8PEM(t testing.TB, k crypto.PrivateKey) []byte {
	t.Helper()
	b, err := cryptoutils.MarshalPrivateKeyToPEM(k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKeyFormats loads each kind of key from files, signs and verifies.
func TestKeyFormats(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw := testManifest(t)

	// cosign's encrypted key pair: the format is the point here (0.4 s).
	t.Setenv("COSIGN_PASSWORD", "correct horse")
	kb, err := cosign.GenerateKeyPair(signature.EnvPassword)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecSEC1, _ := cryptoutils.MarshalPrivateKeyToPEM(ecKey)
	ecDER, _ := x509MarshalEC(ecKey)
	for _, tc := range []struct {
		name     string
		priv     []byte
		pub      []byte
		password string
	}{
		{"cosign encrypted", kb.PrivateBytes, kb.PublicBytes, "correct horse"},
		{"ECDSA PKCS#8", ecSEC1, pubPEM(t, &ecKey.PublicKey), ""},
		{"ECDSA SEC 1", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), pubPEM(t, &ecKey.PublicKey), ""},
		{"Ed25519", pkcs8PEM(t, edKey), pubPEM(t, edKey.Public()), ""},
		{"RSA", pkcs8PEM(t, rsaKey), pubPEM(t, &rsaKey.PublicKey), ""},
	} {
		t.Setenv("COSIGN_PASSWORD", tc.password)
		privPath := writeFile(t, dir, tc.name+".key", tc.priv)
		pubPath := writeFile(t, dir, tc.name+".pub", tc.pub)
		sv, err := signature.LoadSigner(ctx, privPath, signature.EnvPassword)
		if err != nil {
			t.Errorf("%s: LoadSigner = %v", tc.name, err)
			continue
		}
		sig, err := signature.Sign(ctx, sv, raw, signature.SignOptions{})
		if err != nil {
			t.Errorf("%s: Sign = %v", tc.name, err)
			continue
		}
		pub, err := signature.LoadVerifier(ctx, pubPath)
		if err != nil {
			t.Errorf("%s: LoadVerifier = %v", tc.name, err)
			continue
		}
		if err := keyVerifier(t, pub).Verify(ctx, signed(t, raw, sig.Base64, nil)); err != nil {
			t.Errorf("%s: Verify = %v", tc.name, err)
		}
	}

	// Keys that cannot be loaded are *KeyError (exit 2), not refusals.
	t.Setenv("COSIGN_PASSWORD", "wrong")
	for _, tc := range []struct{ name, ref string }{
		{"wrong password", writeFile(t, dir, "enc.key", kb.PrivateBytes)},
		{"missing file", filepath.Join(dir, "nope.key")},
		{"not PEM", writeFile(t, dir, "junk.key", []byte("hello"))},
		{"a public key", writeFile(t, dir, "pub.key", kb.PublicBytes)},
		{"KMS provider not compiled in", "gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k"},
	} {
		_, err := signature.LoadSigner(ctx, tc.ref, signature.EnvPassword)
		var ke *signature.KeyError
		if !errors.As(err, &ke) {
			t.Errorf("%s: LoadSigner = %v, want a *KeyError", tc.name, err)
		}
	}
	if _, err := signature.LoadVerifier(ctx, writeFile(t, dir, "priv.pub", kb.PrivateBytes)); err == nil {
		t.Error("LoadVerifier(a private key) = nil error")
	}
}

func pubPEM(t testing.TB, pub crypto.PublicKey) []byte {
	t.Helper()
	b, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOptionsCheck(t *testing.T) {
	key := sigtest.Key(t)
	tr := sigtest.TrustedRoot(t, sigtest.NewCA(t))
	id := &signature.Identity{Subject: "a@example.com", Issuer: "https://issuer.example"}
	for _, tc := range []struct {
		name string
		o    signature.Options
		ok   bool
		// option is the Option of the *verdict.OptionError expected, if any.
		option string
	}{
		{"key", signature.Options{Key: key}, true, ""},
		{"keyless", signature.Options{Identity: id, TrustedRoot: tr}, true, ""},
		{"nothing", signature.Options{}, false, ""},
		{"both", signature.Options{Key: key, Identity: id, TrustedRoot: tr}, false, ""},
		{"keyless without a trusted root", signature.Options{Identity: id}, false, "TrustedRoot"},
		{"keyless without an issuer", signature.Options{Identity: &signature.Identity{Subject: "a"}, TrustedRoot: tr}, false, "Identity.Issuer or Identity.IssuerRegexp"},
		{"keyless without a subject", signature.Options{Identity: &signature.Identity{Issuer: "a"}, TrustedRoot: tr}, false, "Identity.Subject or Identity.SubjectRegexp"},
		{"bad regexp", signature.Options{Identity: &signature.Identity{SubjectRegexp: "(", Issuer: "a"}, TrustedRoot: tr}, false, ""},
	} {
		err := tc.o.Check()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok=%v", tc.name, err, tc.ok)
		}
		var oe *verdict.OptionError
		if tc.option != "" && (!errors.As(err, &oe) || oe.Option != tc.option) {
			t.Errorf("%s: Check = %v, want an OptionError of %s", tc.name, err, tc.option)
		}
	}
}

func TestAllowUnsigned(t *testing.T) {
	ctx := context.Background()
	key := sigtest.Key(t)
	raw := testManifest(t)
	byOther, _ := signature.Sign(ctx, sigtest.Key(t), raw, signature.SignOptions{})
	good, _ := signature.Sign(ctx, key, raw, signature.SignOptions{})
	v := signature.AllowUnsigned(keyVerifier(t, key))
	if err := v.Verify(ctx, signed(t, raw, nil, nil)); err != nil {
		t.Errorf("AllowUnsigned(key).Verify(unsigned) = %v, want nil", err)
	}
	if err := v.Verify(ctx, signed(t, raw, good.Base64, nil)); err != nil {
		t.Errorf("AllowUnsigned(key).Verify(signed) = %v, want nil", err)
	}
	if err := v.Verify(ctx, signed(t, raw, byOther.Base64, nil)); !verdict.IsMismatch(err) {
		t.Errorf("AllowUnsigned(key).Verify(another key's signature) = %v, want a refusal", err)
	}
	if err := signature.AllowUnsigned(nil).Verify(ctx, signed(t, raw, byOther.Base64, nil)); err != nil {
		t.Errorf("AllowUnsigned(nil).Verify = %v, want nil", err)
	}
}
