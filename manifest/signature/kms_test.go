package signature_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	// The AWS KMS provider, as `go build -tags awskms` links it into the
	// binary (a test import: the library stays free of it).
	_ "github.com/sigstore/sigstore/pkg/signature/kms/aws"

	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
)

// fakeKMS speaks the AWS KMS JSON protocol (TrentService GetPublicKey,
// DescribeKey, Sign) over TLS on loopback, for one ECDSA P-256 key.
type fakeKMS struct {
	key   *ecdsa.PrivateKey
	signs atomic.Int64
}

func (f *fakeKMS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const arn = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	var in struct {
		KeyId   string
		Message []byte
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	var out any
	switch r.Header.Get("X-Amz-Target") {
	case "TrentService.GetPublicKey":
		der, _ := x509.MarshalPKIXPublicKey(&f.key.PublicKey)
		out = map[string]any{"KeyId": arn, "PublicKey": der, "KeySpec": "ECC_NIST_P256", "KeyUsage": "SIGN_VERIFY", "SigningAlgorithms": []string{"ECDSA_SHA_256"}}
	case "TrentService.DescribeKey":
		out = map[string]any{"KeyMetadata": map[string]any{"KeyId": arn, "Arn": arn, "KeySpec": "ECC_NIST_P256", "KeyUsage": "SIGN_VERIFY", "SigningAlgorithms": []string{"ECDSA_SHA_256"}, "Enabled": true, "KeyState": "Enabled"}}
	case "TrentService.Sign":
		f.signs.Add(1)
		sig, err := ecdsa.SignASN1(rand.Reader, f.key, in.Message)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out = map[string]any{"KeyId": arn, "Signature": sig, "SigningAlgorithm": "ECDSA_SHA_256"}
	default:
		w.WriteHeader(http.StatusBadRequest)
		out = map[string]any{"__type": "UnsupportedOperationException"}
	}
	json.NewEncoder(w).Encode(out)
}

// awsEnv points the AWS SDK at test credentials and the fake's CA only:
// no shared config, no instance metadata.
func awsEnv(t *testing.T, srv *httptest.Server) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_REGION": "us-east-1", "AWS_CA_BUNDLE": ca, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_PROFILE": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_KMS": "",
	} {
		t.Setenv(k, v)
	}
}

// TestAWSKMS signs and verifies with an awskms:// key through sigstore's
// AWS KMS provider, against a protocol fake on loopback.
func TestAWSKMS(t *testing.T) {
	ctx := context.Background()
	pk, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	fake := &fakeKMS{key: pk}
	srv := httptest.NewTLSServer(fake)
	defer srv.Close()
	awsEnv(t, srv)
	ref := "awskms://" + strings.TrimPrefix(srv.URL, "https://") + "/alias/lockstep-release"

	sv, err := signature.LoadSigner(ctx, ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := testManifest(t)
	sig, err := signature.Sign(ctx, sv, raw, signature.SignOptions{Bundle: true})
	if err != nil {
		t.Fatal(err)
	}
	if fake.signs.Load() != 1 {
		t.Errorf("KMS Sign called %d times, want 1", fake.signs.Load())
	}
	kv, err := signature.LoadVerifier(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	v := keyVerifier(t, kv)
	if err := v.Verify(ctx, signed(t, raw, sig.Base64, sig.Bundle)); err != nil {
		t.Errorf("Verify(KMS signature) with the KMS key = %v", err)
	}
	// The same signature verifies with the public key alone, and not with
	// another key.
	pv, _ := sigsig.LoadVerifier(&pk.PublicKey, crypto.SHA256)
	if err := keyVerifier(t, pv).Verify(ctx, signed(t, raw, sig.Base64, nil)); err != nil {
		t.Errorf("Verify(KMS signature) with the PEM public key = %v", err)
	}
	if err := keyVerifier(t, sigtest.Key(t)).Verify(ctx, signed(t, raw, sig.Base64, nil)); !verdict.IsMismatch(err) {
		t.Errorf("Verify(KMS signature) with another key = %v, want a refusal", err)
	}

	// A KMS that is not there is could-not-verify (exit 3), not a refusal.
	srv.Close()
	down := "awskms://" + strings.TrimPrefix(srv.URL, "https://") + "/alias/other"
	_, err = signature.Sign(ctx, mustLoad(t, down), raw, signature.SignOptions{})
	if !verdict.IsUnavailable(err) {
		t.Errorf("Sign with an unreachable KMS = %v, want an *verdict.UnavailableError", err)
	}
}

func mustLoad(t *testing.T, ref string) sigsig.SignerVerifier {
	t.Helper()
	sv, err := signature.LoadSigner(context.Background(), ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sv
}
