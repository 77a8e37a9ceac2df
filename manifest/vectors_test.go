package manifest_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

// vectors is testdata/vectors.json, the test vectors of
// docs/manifest-format.md. testdata/vectors.py wrote them from the
// specification with Python's json and hashlib, not from this package.
type vectors struct {
	Valid []struct {
		Name, Input, Canonical, Digest string
	}
	Invalid []struct {
		Name, Input, Field string
	}
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Valid) == 0 || len(v.Invalid) == 0 {
		t.Fatalf("testdata/vectors.json holds %d valid and %d invalid vectors", len(v.Valid), len(v.Invalid))
	}
	return v
}

// TestVectors checks Parse, Encode and Digest against the specification's
// test vectors: every valid input gives its canonical encoding and digest
// (and so does its canonical encoding, parsed again); every invalid one is
// a *ValidationError naming its field.
func TestVectors(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range v.Valid {
		t.Run(tc.Name, func(t *testing.T) {
			for _, input := range []string{tc.Input, tc.Canonical} {
				m, err := manifest.Parse([]byte(input))
				if err != nil {
					t.Fatalf("Parse(%q) = %v, want a valid manifest", input, err)
				}
				got, err := m.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tc.Canonical {
					t.Errorf("Encode of %q =\n%s\nwant\n%s", input, got, tc.Canonical)
				}
				d, err := m.Digest()
				if err != nil {
					t.Fatal(err)
				}
				if d.String() != tc.Digest {
					t.Errorf("Digest of %q = %s, want %s", input, d, tc.Digest)
				}
				s, err := manifest.NewSigned([]byte(input), "vector")
				if err != nil {
					t.Fatal(err)
				}
				if s.Digest.String() != tc.Digest {
					t.Errorf("NewSigned(%q).Digest = %s, want %s", input, s.Digest, tc.Digest)
				}
			}
			if got := manifest.SHA256([]byte(tc.Canonical)); got.String() != tc.Digest {
				t.Errorf("the vector's digest %s is not the SHA-256 of its canonical encoding (%s)", tc.Digest, got)
			}
		})
	}
	for _, tc := range v.Invalid {
		t.Run(tc.Name, func(t *testing.T) {
			_, err := manifest.Parse([]byte(tc.Input))
			var ve *manifest.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Parse(%q) = %v, want a *ValidationError", tc.Input, err)
			}
			if ve.Field != tc.Field {
				t.Errorf("Parse(%q) = %v: field %q, want %q", tc.Input, err, ve.Field, tc.Field)
			}
		})
	}
}
