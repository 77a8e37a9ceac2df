package signature_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
)

// FuzzVerify: whatever bytes stand in MANIFEST.sig or the bundle, Verify
// never panics, every failure is a refusal (*signature.Error), and it
// accepts only a signature that really verifies with the key (a parse
// failure is never a success).
func FuzzVerify(f *testing.F) {
	ctx := context.Background()
	key := sigtest.Key(f)
	raw := testManifest(f)
	good, err := signature.Sign(ctx, key, raw, signature.SignOptions{Bundle: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good.Base64, []byte(nil))
	f.Add([]byte(nil), good.Bundle)
	f.Add(good.Base64, good.Bundle)
	f.Add([]byte("=="), []byte("{}"))
	f.Add([]byte(nil), bytes.Replace(good.Bundle, []byte("SHA2_256"), []byte("SHA2_384"), 1))
	f.Add([]byte(nil), []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	v := keyVerifier(f, key)
	f.Fuzz(func(t *testing.T, sig, bundle []byte) {
		err := v.Verify(ctx, signed(t, raw, sig, bundle))
		if err != nil {
			var se *signature.Error
			if !errors.As(err, &se) || !verdict.IsMismatch(err) {
				t.Fatalf("Verify = %T %v, want a *signature.Error", err, err)
			}
			return
		}
		if len(sig) == 0 && len(bundle) == 0 {
			t.Fatal("Verify(nothing) = nil")
		}
		if len(sig) > 0 {
			der, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sig)))
			if derr != nil || key.VerifySignature(bytes.NewReader(der), bytes.NewReader(raw)) != nil {
				t.Fatalf("Verify accepted signature %q that does not verify", sig)
			}
		}
	})
}
