package app

import (
	"os"
	"path/filepath"
	"testing"

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
	for _, p := range []string{filepath.Join(dir, "missing.pem"), notPEM} {
		t.Setenv("AWS_CA_BUNDLE", p)
		if _, err := awsCABundle(); ExitCode(err) != ExitInvalid {
			t.Errorf("awsCABundle() with AWS_CA_BUNDLE=%s = %v (exit %d), want a usage error", p, err, ExitCode(err))
		}
	}
}

// TestStoreChannel: the agent watches the very store its check reads.
func TestStoreChannel(t *testing.T) {
	ch := store.ChannelSource{Release: "web", Channel: "production"}
	if got, ok := storeChannel(&trusted.Source{Upstream: ch}); !ok || got != ch {
		t.Errorf("storeChannel(a trusted store channel) = %+v, %v; want %+v", got, ok, ch)
	}
	if _, ok := storeChannel(&trusted.Source{Upstream: manifest.FileSource{Path: "m.json"}}); ok {
		t.Error("storeChannel(a trusted file source) found a channel")
	}
}
