package app

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentCLIRefusesBadListen(t *testing.T) {
	t.Parallel()
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("two words\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"every interface, no authentication", []string{"--listen", "0.0.0.0:0"}, "needs --token-file"},
		{"an empty host", []string{"--listen", ":9464"}, "needs --token-file"},
		{"a bad token file", []string{"--listen", "0.0.0.0:0", "--token-file", token}, "want one token"},
		{"a certificate without its key", []string{"--tls-cert", "cert.pem"}, "go together"},
		{"a client CA without TLS", []string{"--client-ca", "ca.pem"}, "needs --tls-cert"},
		{"jitter out of range", []string{"--jitter", "1.5"}, "--jitter"},
		{"an unknown flag", []string{"--bogus"}, "bogus"},
		{"a malformed duration", []string{"--interval", "soon"}, "interval"},
	}
	for _, tt := range tests {
		code, _, errOut := runFleetCLI(t, append([]string{"agent", "--identity", "hostname"}, tt.args...)...)
		if code != ExitInvalid || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", tt.name, code, errOut, tt.want)
		}
	}
}

// TestAgentNamedSaysNoHostnameFallback: with --instance-name the instance
// is named by the flag, and the agent does not log that the hostname
// identifies it when there is no instance metadata (it says so without
// the flag).
func TestAgentNamedSaysNoHostnameFallback(t *testing.T) {
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	m, _ := fleetFixture(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// The agent stops at its listen address, which is taken: after it
	// has found its identity.
	args := []string{"agent", "--identity", "auto", "--manifest", m, "--release", "store-web", "--insecure-allow-unsigned",
		"--running", "digest:sha256:" + strings.Repeat("3", 64), "--listen", busy.Addr().String()}
	const fallback = "the hostname identifies this instance"
	code, _, errOut := runFleetCLI(t, args...)
	if code != ExitUnverified || !strings.Contains(errOut, fallback) {
		t.Fatalf("agent without --instance-name, no IMDS: exit %d, stderr %q; want 3 saying %q", code, errOut, fallback)
	}
	code, _, errOut = runFleetCLI(t, append(args, "--instance-name", "web-1")...)
	if code != ExitUnverified || strings.Contains(errOut, fallback) {
		t.Errorf("agent --instance-name web-1, no IMDS: exit %d, stderr %q; want 3, and no word of the hostname", code, errOut)
	}
}
