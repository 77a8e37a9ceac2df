package keyless

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
)

func TestNoIdentity(t *testing.T) {
	for _, v := range []string{"ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "SIGSTORE_ID_TOKEN"} {
		t.Setenv(v, "")
		os.Unsetenv(v) // t.Setenv restores it
	}
	if _, err := Sign(context.Background(), []byte("x"), Options{}); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("Sign without a token = %v, want ErrNoIdentity", err)
	}
	// An empty token is no token (and nothing is sent anywhere).
	t.Setenv("SIGSTORE_ID_TOKEN", "")
	if _, err := Sign(context.Background(), []byte("x"), Options{}); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("Sign with an empty token = %v, want ErrNoIdentity", err)
	}
}

// TestFromBundle: the signature written beside a keyless bundle is the
// bundle's own message signature.
func TestFromBundle(t *testing.T) {
	ca := sigtest.NewCA(t)
	sv, cert := ca.Leaf(t, "release@lockstep.dev", "https://accounts.google.com")
	want, err := signature.Sign(context.Background(), sv, []byte("manifest"), signature.SignOptions{Certificate: cert})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fromBundle(want.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Base64, want.Base64) {
		t.Errorf("fromBundle signature = %s, want %s", got.Base64, want.Base64)
	}
	if _, err := fromBundle([]byte("{")); err == nil {
		t.Error("fromBundle(junk) = nil error")
	}
}
