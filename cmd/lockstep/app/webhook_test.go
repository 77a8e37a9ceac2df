package app

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// webhookTestCert writes a certificate for 127.0.0.1 from a test CA and
// its key to dir and returns their paths and a pool trusting the CA.
func webhookTestCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	ca := tlstest.NewCA(t)
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	tlstest.WritePair(t, certFile, keyFile, ca.ValidFor(t, "127.0.0.1", time.Hour))
	return certFile, keyFile, ca.Pool
}

// runWebhookCLI runs lockstep with args and returns its exit code and
// stderr. A --listen address of loopbackAddr's is served on the socket it bound.
func runWebhookCLI(ctx context.Context, args ...string) (int, string) {
	var stdout, stderr bytes.Buffer
	inv := newInvocation(nil)
	for i, arg := range args[:max(len(args)-1, 0)] {
		if ln, ok := handedOver.Load(args[i+1]); ok && arg == "--listen" {
			inv.listeners = map[string]net.Listener{args[i+1]: ln.(net.Listener)}
		}
	}
	a := appWith(inv)
	a.Writer, a.ErrWriter = &stdout, &stderr
	err := a.RunContext(ctx, append([]string{"lockstep"}, args...))
	return Exit(err, &stderr), stderr.String()
}

func TestWebhookUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, _ := webhookTestCert(t, dir)
	man := filepath.Join("..", "..", "..", "admission", "webhook", "testdata", "manifest.json")
	base := []string{"webhook", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no certificate", []string{"webhook", "--manifest", man, "--release", "store-web", "--insecure-allow-unsigned"}, ExitInvalid, "tls-cert"},
		{"bad mode", append(base, "--manifest", man, "--release", "store-web", "--insecure-allow-unsigned", "--mode", "audit"), ExitInvalid, `--mode "audit": want enforce or warn`},
		{"bad unmanaged", append(base, "--manifest", man, "--release", "store-web", "--insecure-allow-unsigned", "--unmanaged", "ignore"), ExitInvalid, `--unmanaged "ignore"`},
		{"short refresh", append(base, "--manifest", man, "--release", "store-web", "--insecure-allow-unsigned", "--refresh", "10ms"), ExitInvalid, "--refresh 10ms"},
		{"no manifest", append(base, "--insecure-allow-unsigned"), ExitInvalid, "a manifest is required"},
		{"certificate missing", []string{"webhook", "--listen", "127.0.0.1:0", "--tls-cert", filepath.Join(dir, "nope.crt"), "--tls-key", key, "--manifest", man, "--release", "store-web", "--insecure-allow-unsigned"}, ExitUnverified, "no such file"},
	}
	for _, tt := range tests {
		code, stderr := runWebhookCLI(context.Background(), tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tt.name, code, stderr, tt.code, tt.want)
		}
	}
}

// TestWebhookServes runs `lockstep webhook` until it is ready over TLS,
// then stops it as SIGTERM would: exit 0.
func TestWebhookServes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, pool := webhookTestCert(t, dir)
	addr := loopbackAddr(t)
	man := filepath.Join("..", "..", "..", "admission", "webhook", "testdata", "manifest.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // also when it fails before it is ready
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stderr := runWebhookCLI(ctx, "webhook", "--listen", addr, "--tls-cert", cert, "--tls-key", key,
			"--manifest", man, "--release", "store-web", "--insecure-allow-unsigned", "--refresh", "1s")
		done <- result{code, stderr}
	}()
	client := webhookClient(pool)
	waitReady(t, client, "https://"+addr+"/readyz", func() (string, bool) {
		select {
		case r := <-done:
			return fmt.Sprintf("%d: %s", r.code, r.stderr), true
		default:
			return "", false
		}
	})
	cancel()
	r := <-done
	if r.code != ExitOK {
		t.Errorf("exit %d after the context was cancelled, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "insecure-allow-unsigned") || !strings.Contains(r.stderr, "manifest loaded") {
		t.Errorf("stderr does not say the manifest is unsigned and loaded:\n%s", r.stderr)
	}
}
