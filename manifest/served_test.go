package manifest

import (
	"errors"
	"fmt"
	"slices"
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
	back := roundTripAtVersion(t, m)
	if !back.Assets.Files[1].OnInstance() || back.Assets.Files[0].OnInstance() {
		t.Errorf("after a round trip served = %q, %q; want \"\", %q", back.Assets.Files[0].Served, back.Assets.Files[1].Served, ServedInstance)
	}
	if d, _ := back.Digest(); d == cdnOnly {
		t.Error("the digest does not change when a file moves to the instance")
	}
}

// TestEntryVersion: an entry file makes the manifest lockstep.dev/v3, an
// older apiVersion that carries it is refused, the field survives a round
// trip and changes the digest, and the entry is a root beside the pages.
func TestEntryVersion(t *testing.T) {
	m := testManifest()
	m.Assets.Files = []File{
		{Path: "assets/main-1a2b.js", Size: 1, SHA256: strings.Repeat("a", 64), Loads: []string{"assets/lazy-3c4d.js"}},
		{Path: "assets/lazy-3c4d.js", Size: 2, SHA256: strings.Repeat("b", 64)},
		{Path: "index.html", Size: 3, SHA256: strings.Repeat("c", 64)},
	}
	slices.SortFunc(m.Assets.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	m.Assets.Fingerprint = Fingerprint(m.Assets.Files)
	m.APIVersion = m.Version()
	plain, err := m.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Assets.Roots(); !slices.Equal(got, []string{"index.html"}) {
		t.Fatalf("Roots without an entry = %q, want only the page", got)
	}
	main := slices.IndexFunc(m.Assets.Files, func(f File) bool { return f.Path == "assets/main-1a2b.js" })
	m.Assets.Files[main].Entry = true
	if got := m.Version(); got != APIVersionV3 {
		t.Fatalf("Version with an entry = %q, want %q", got, APIVersionV3)
	}
	_, err = m.Encode()
	var ve *ValidationError
	if want := fmt.Sprintf("assets.files[%d].entry", main); !errors.As(err, &ve) || ve.Field != want {
		t.Fatalf("Encode of a %s manifest with an entry = %v, want a ValidationError naming %s", m.APIVersion, err, want)
	}
	back := roundTripAtVersion(t, m)
	if got, want := back.Assets.Roots(), []string{"assets/main-1a2b.js", "index.html"}; !slices.Equal(got, want) {
		t.Errorf("Roots after a round trip = %q, want %q", got, want)
	}
	if got, want := back.Assets.Closure(back.Assets.Roots()), []string{"assets/lazy-3c4d.js", "assets/main-1a2b.js", "index.html"}; !slices.Equal(got, want) {
		t.Errorf("Closure of the roots = %q, want %q (the entry's lazy chunk reached)", got, want)
	}
	if d, _ := back.Digest(); d == plain {
		t.Error("the digest does not change when a file becomes an entry")
	}
}
