package manifest

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateAttestations: an embedded attestation needs a digest, a
// known form and content; a Sigstore bundle carries no DSSE-only
// material; and a manifest embedding attestations is apiVersion v2. Each
// refusal names the entry's field.
func TestValidateAttestations(t *testing.T) {
	dsse := func() EmbeddedAttestation {
		return EmbeddedAttestation{Digest: MustParseDigest("sha256:" + strings.Repeat("1", 64)), MediaType: AttestationDSSE, Content: []byte(`{}`)}
	}
	for _, tt := range []struct {
		name  string
		edit  func(*EmbeddedAttestation)
		field string // "" is valid
	}{
		{"a DSSE envelope", func(*EmbeddedAttestation) {}, ""},
		{"a DSSE envelope with its keyless material", func(a *EmbeddedAttestation) { a.Certificate, a.Chain, a.Bundle = "cert", "chain", []byte(`{}`) }, ""},
		{"a Sigstore bundle", func(a *EmbeddedAttestation) { a.MediaType = AttestationBundle }, ""},
		{"no digest", func(a *EmbeddedAttestation) { a.Digest = Digest{} }, "verification.attestations[1].digest"},
		{"no media type", func(a *EmbeddedAttestation) { a.MediaType = "" }, "verification.attestations[1].mediaType"},
		{"an unknown form", func(a *EmbeddedAttestation) { a.MediaType = "application/vnd.in-toto+json" }, "verification.attestations[1].mediaType"},
		{"no content", func(a *EmbeddedAttestation) { a.Content = nil }, "verification.attestations[1].content"},
		{"a bundle with a certificate beside it", func(a *EmbeddedAttestation) { a.MediaType, a.Certificate = AttestationBundle, "cert" }, "verification.attestations[1].mediaType"},
		{"a bundle with a chain beside it", func(a *EmbeddedAttestation) { a.MediaType, a.Chain = AttestationBundle, "chain" }, "verification.attestations[1].mediaType"},
		{"a bundle with a Rekor bundle beside it", func(a *EmbeddedAttestation) { a.MediaType, a.Bundle = AttestationBundle, []byte(`{}`) }, "verification.attestations[1].mediaType"},
		{"a bundle with a timestamp beside it", func(a *EmbeddedAttestation) { a.MediaType, a.RFC3161Timestamp = AttestationBundle, []byte(`{}`) }, "verification.attestations[1].mediaType"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest()
			m.APIVersion = APIVersionV2
			a := dsse()
			tt.edit(&a)
			m.Verification = &Verification{Attestations: []EmbeddedAttestation{dsse(), a}}
			err := Validate(m)
			var ve *ValidationError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate = %v, want valid", err)
			case tt.field == "":
			case !errors.As(err, &ve):
				t.Fatalf("Validate = %v, want a ValidationError of %s", err, tt.field)
			case ve.Field != tt.field:
				t.Errorf("Validate refused %s (%v), want %s", ve.Field, err, tt.field)
			}
		})
	}
	m := testManifest()
	m.Verification = &Verification{Attestations: []EmbeddedAttestation{dsse()}}
	var ve *ValidationError
	if err := Validate(m); !errors.As(err, &ve) || ve.Field != "verification.attestations" || !strings.Contains(err.Error(), APIVersionV2) {
		t.Errorf("Validate(a v1 manifest embedding attestations) = %v, want a verification.attestations refusal naming %s", err, APIVersionV2)
	}
}

func TestBuildSourceBindable(t *testing.T) {
	for _, tt := range []struct {
		s    *BuildSource
		want bool
	}{
		{nil, false},
		{&BuildSource{}, false},
		{&BuildSource{Repository: "https://github.com/acme/store"}, false},
		{&BuildSource{Commit: "0123456789abcdef0123456789abcdef01234567"}, false},
		{&BuildSource{Repository: "https://github.com/acme/store", Commit: "0123456789abcdef0123456789abcdef01234567"}, true},
	} {
		if got := tt.s.Bindable(); got != tt.want {
			t.Errorf("%+v.Bindable() = %v, want %v", tt.s, got, tt.want)
		}
	}
}
