package signature_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
)

// TestCosignInterop shows both directions with the real cosign CLI, on a
// key pair cosign generated: cosign verify-blob accepts what lockstep
// signed (signature and bundle), and lockstep accepts what cosign
// sign-blob signed. Nothing leaves loopback.
func TestCosignInterop(t *testing.T) {
	cosign := sigtest.RequireCosign(t)
	ctx := context.Background()
	dir := t.TempDir()
	priv, pub := cosign.GenerateKeyPair(t, dir)
	path := filepath.Join(dir, "release.json")
	if err := os.WriteFile(path, testManifest(t), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyRoot := filepath.Join(dir, "trusted_root.json")
	os.WriteFile(emptyRoot, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o644)

	t.Setenv("COSIGN_PASSWORD", sigtest.CosignPassword)
	sv, err := signature.LoadSigner(ctx, priv, signature.EnvPassword)
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "release.bundle.json")
	res, err := signature.SignFile(ctx, path, func(ctx context.Context, raw []byte) (*signature.Signature, error) {
		return signature.Sign(ctx, sv, raw, signature.SignOptions{Bundle: true})
	}, signature.FileOutputs{Bundle: bundle})
	if err != nil {
		t.Fatal(err)
	}

	// cosign accepts lockstep's signature and bundle.
	cosign.MustRun(t, dir, "verify-blob", "--key", pub, "--signature", res.Signature, "--insecure-ignore-tlog", path)
	cosign.MustRun(t, dir, "verify-blob", "--key", pub, "--bundle", bundle, "--new-bundle-format", "--trusted-root", emptyRoot, "--insecure-ignore-tlog", path)
	// ... and refuses them over other bytes: it really checks.
	other := filepath.Join(dir, "other.json")
	raw, _ := os.ReadFile(path)
	os.WriteFile(other, append(raw, '\n'), 0o644)
	if out, err := cosign.Run(dir, "verify-blob", "--key", pub, "--signature", res.Signature, "--insecure-ignore-tlog", other); err == nil {
		t.Errorf("cosign verify-blob accepted lockstep's signature over other bytes:\n%s", out)
	}

	// lockstep accepts cosign's signature and bundle (lockstep's own
	// MANIFEST.sig out of the way).
	os.Remove(res.Signature)
	cosign.MustRun(t, dir, "sign-blob", "--key", priv, "--tlog-upload=false", "--output-signature", "cosign.sig", "-y", path)
	cosign.MustRun(t, dir, "sign-blob", "--key", priv, "--tlog-upload=false", "--new-bundle-format", "--bundle", "cosign.bundle.json", "-y", path)
	pubV, err := signature.LoadVerifier(ctx, pub)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewVerifier(signature.Options{Key: pubV})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, sig, bundle string }{
		{"cosign's signature", filepath.Join(dir, "cosign.sig"), ""},
		{"cosign's bundle", "", filepath.Join(dir, "cosign.bundle.json")},
	} {
		if _, err := signature.VerifyFile(ctx, v, path, tc.sig, tc.bundle); err != nil {
			t.Errorf("lockstep Verify(%s) = %v", tc.name, err)
		}
		// ... and refuses cosign's material over other bytes.
		s, err := manifest.NewSigned(raw, "other")
		if err != nil {
			t.Fatal(err)
		}
		s.Raw = append(raw, '\n')
		if tc.sig != "" {
			s.Signature, _ = os.ReadFile(tc.sig)
		} else {
			s.Bundle, _ = os.ReadFile(tc.bundle)
		}
		if err := v.Verify(ctx, s); err == nil {
			t.Errorf("lockstep Verify(%s over other bytes) = nil, want a refusal", tc.name)
		}
	}
}
