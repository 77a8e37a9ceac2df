package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentCLIRefusesBadListen(t *testing.T) {
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
