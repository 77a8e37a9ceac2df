package manifest

import (
	"errors"
	"strings"
	"testing"
)

// TestServedVersion: a file served by the instance makes the manifest
// lockstep.dev/v3, an older apiVersion that carries it is refused, and
// the field survives a round trip and changes the digest.
func TestServedVersion(t *testing.T) {
	m := testManifest()
	m.Assets.Files = []File{
		{Path: "_next/static/app-1a2b.js", Size: 1, SHA256: strings.Repeat("a", 64), Loads: []string{"index.txt"}},
		{Path: "index.txt", Size: 2, SHA256: strings.Repeat("b", 64)},
	}
	m.Assets.Fingerprint = Fingerprint(m.Assets.Files)
	m.APIVersion = m.Version()
	cdnOnly, err := m.Digest()
	if err != nil {
		t.Fatal(err)
	}
	m.Assets.Files[1].Served = ServedInstance
	if got := m.Version(); got != APIVersionV3 {
		t.Fatalf("Version with served = %q, want %q", got, APIVersionV3)
	}
	_, err = m.Encode()
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "assets.files[1].served" {
		t.Fatalf("Encode of a %s manifest with served = %v, want a ValidationError naming assets.files[1].served", m.APIVersion, err)
	}
	m.APIVersion = m.Version()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Assets.Files[1].OnInstance() || back.Assets.Files[0].OnInstance() {
		t.Errorf("after a round trip served = %q, %q; want \"\", %q", back.Assets.Files[0].Served, back.Assets.Files[1].Served, ServedInstance)
	}
	if d, _ := back.Digest(); d == cdnOnly {
		t.Error("the digest does not change when a file moves to the instance")
	}
}
