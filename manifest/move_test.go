package manifest

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func signedAt(t *testing.T, gen int64) *Signed {
	t.Helper()
	m := testManifest()
	m.Release.Generation = gen
	raw, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigned(raw, "test")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNextPointer(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s7 := signedAt(t, 7)
	first, err := NextPointer(nil, "production", s7, "ci", now)
	if err != nil || first.Generation != 7 || first.Digest != s7.Digest || first.Release != "store-web" || len(first.History) != 0 {
		t.Fatalf("NextPointer(nil) = %+v, %v", first, err)
	}
	for _, tc := range []struct {
		gen  int64
		want bool
	}{{6, false}, {7, false}, {8, true}, {100, true}} {
		next, err := NextPointer(first, "production", signedAt(t, tc.gen), "ci", now)
		var ge *GenerationError
		switch {
		case tc.want && err != nil:
			t.Errorf("generation %d over 7: %v, want a move", tc.gen, err)
		case tc.want && (len(next.History) != 1 || next.History[0].Generation != 7):
			t.Errorf("generation %d over 7: history %+v, want 7 first", tc.gen, next.History)
		case !tc.want && (!errors.As(err, &ge) || ge.Have != 7 || ge.Offered != tc.gen):
			t.Errorf("generation %d over 7: %v, want a GenerationError have 7 offered %d", tc.gen, err, tc.gen)
		case !tc.want && !strings.Contains(err.Error(), "generation "+itoa(tc.gen)+" is not newer than generation 7"):
			t.Errorf("message %q does not name both generations", err)
		}
	}
	if _, err := NextPointer(first, "Prod", signedAt(t, 8), "ci", now); err == nil {
		t.Error("a bad channel name was accepted")
	}
	other := *first
	other.Channel = "staging"
	var ce *CorruptError
	if _, err := NextPointer(&other, "production", signedAt(t, 8), "ci", now); !errors.As(err, &ce) {
		t.Errorf("a pointer of another channel: %v, want a CorruptError", err)
	}
}

func TestParsePointer(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p, err := NextPointer(nil, "production", signedAt(t, 7), "ci", now)
	if err != nil {
		t.Fatal(err)
	}
	good, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParsePointer(good, "loc", "store-web", "production")
	if err != nil || back.Digest != p.Digest || back.Generation != 7 || !back.MovedAt.Equal(now) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	d := p.Digest.String()
	for _, tc := range []struct{ name, doc, reason string }{
		{"truncated", string(good[:len(good)/2]), "truncated"},
		{"empty", "", "truncated"},
		{"unknown field", `{"release":"store-web","channel":"production","digest":"` + d + `","generation":7,"movedAt":"2026-12-01T10:00:00Z","extra":1}`, "unknown field"},
		{"trailing data", string(good) + "{}", "trailing data"},
		{"other release", `{"release":"api","channel":"production","digest":"` + d + `","generation":7,"movedAt":"2026-12-01T10:00:00Z"}`, `release "api"`},
		{"other channel", `{"release":"store-web","channel":"staging","digest":"` + d + `","generation":7,"movedAt":"2026-12-01T10:00:00Z"}`, `channel "staging"`},
		{"no digest", `{"release":"store-web","channel":"production","generation":7,"movedAt":"2026-12-01T10:00:00Z"}`, "no digest"},
		{"bad digest", `{"release":"store-web","channel":"production","digest":"sha256:AB","generation":7,"movedAt":"2026-12-01T10:00:00Z"}`, "not valid"},
		{"generation 0", `{"release":"store-web","channel":"production","digest":"` + d + `","generation":0,"movedAt":"2026-12-01T10:00:00Z"}`, "below 1"},
		{"no movedAt", `{"release":"store-web","channel":"production","digest":"` + d + `","generation":7}`, "no movedAt"},
	} {
		_, err := ParsePointer([]byte(tc.doc), "store-web/channels/production.json", "store-web", "production")
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), "store-web/channels/production.json") {
			t.Errorf("%s: ParsePointer = %v, want a CorruptError naming the object and saying %q", tc.name, err, tc.reason)
		}
	}
}

func TestCheckStored(t *testing.T) {
	s := signedAt(t, 7)
	if _, err := CheckStored(s.Raw, "loc", "store-web", s.Digest); err != nil {
		t.Errorf("CheckStored(good) = %v", err)
	}
	other := signedAt(t, 8)
	for name, tc := range map[string]struct {
		raw     []byte
		release string
	}{
		"other manifest": {other.Raw, "store-web"},
		"other release":  {s.Raw, "api"},
		"not a manifest": {[]byte(`{"apiVersion":"lockstep.dev/v1","kind":"ReleaseManifest"`), "store-web"},
	} {
		var ce *CorruptError
		var ve *ValidationError
		_, err := CheckStored(tc.raw, "loc", tc.release, s.Digest)
		if !errors.As(err, &ce) || errors.As(err, &ve) {
			t.Errorf("%s: CheckStored = %v, want a CorruptError (and not a ValidationError: exit 3)", name, err)
		}
	}
}
