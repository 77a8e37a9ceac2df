package app

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
)

func TestAWSCABundle(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "")
	if cfg, err := awsCABundle(); cfg != nil || err != nil {
		t.Errorf("awsCABundle() without AWS_CA_BUNDLE = %v, %v; want nil, nil", cfg, err)
	}
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	badDER := filepath.Join(dir, "bad-der.pem")
	if err := os.WriteFile(badDER, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "missing.pem"), notPEM, badDER} {
		t.Setenv("AWS_CA_BUNDLE", p)
		if _, err := awsCABundle(); ExitCode(err) != ExitInvalid {
			t.Errorf("awsCABundle() with AWS_CA_BUNDLE=%s = %v (exit %d), want a usage error", p, err, ExitCode(err))
		}
	}
	// A bundle whose first block is no certificate still counts; its
	// certificates are trusted.
	ca := tlstest.NewCA(t)
	good := filepath.Join(dir, "good.pem")
	data := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})...)
	if err := os.WriteFile(good, data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", good)
	b, err := awsCABundle()
	if err != nil || b == nil {
		t.Fatalf("awsCABundle() with a good bundle = %v, %v", b, err)
	}
	if _, err := ca.Cert.Verify(x509.VerifyOptions{Roots: b.roots()}); err != nil {
		t.Errorf("the bundle's roots do not hold its certificate: %v", err)
	}
}

// TestStoreChannel: the agent watches the very store its check reads.
func TestStoreChannel(t *testing.T) {
	t.Parallel()
	ch := store.ChannelSource{Release: "web", Channel: "production"}
	if got, ok := storeChannel(&trusted.Source{Upstream: ch}); !ok || got != ch {
		t.Errorf("storeChannel(a trusted store channel) = %+v, %v; want %+v", got, ok, ch)
	}
	if _, ok := storeChannel(&trusted.Source{Upstream: manifest.FileSource{Path: "m.json"}}); ok {
		t.Error("storeChannel(a trusted file source) found a channel")
	}
}
