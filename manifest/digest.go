package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Digest is a parsed content digest in its canonical form,
// "sha256:" followed by 64 lower-case hex digits.
type Digest struct {
	Algorithm string
	Hex       string
}

// hexLen is the length of the hex encoding for each supported algorithm.
var hexLen = map[string]int{"sha256": 64, "sha512": 128}

// ParseDigest parses s as a canonical digest. Upper-case hex, a wrong
// length, an unknown algorithm or a missing separator are errors.
func ParseDigest(s string) (Digest, error) {
	alg, h, ok := strings.Cut(s, ":")
	if !ok {
		return Digest{}, fmt.Errorf("digest %q: want algorithm:hex", s)
	}
	n, known := hexLen[alg]
	if !known {
		return Digest{}, fmt.Errorf("digest %q: unknown algorithm %q", s, alg)
	}
	if len(h) != n {
		return Digest{}, fmt.Errorf("digest %q: %s wants %d hex digits, got %d", s, alg, n, len(h))
	}
	if err := lowerHex(h); err != nil {
		return Digest{}, fmt.Errorf("digest %q: %v", s, err)
	}
	return Digest{Algorithm: alg, Hex: h}, nil
}

// MustParseDigest is ParseDigest for constants in tests and examples; it
// panics on a malformed digest.
func MustParseDigest(s string) Digest {
	d, err := ParseDigest(s)
	if err != nil {
		panic(err)
	}
	return d
}

// SHA256 returns the sha256 digest of b.
func SHA256(b []byte) Digest {
	sum := sha256.Sum256(b)
	return Digest{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

func lowerHex(h string) error {
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			return fmt.Errorf("upper-case hex is not canonical")
		default:
			return fmt.Errorf("%q is not a hex digit", c)
		}
	}
	return nil
}

// String returns the canonical form, or "" for the zero Digest.
func (d Digest) String() string {
	if d.IsZero() {
		return ""
	}
	return d.Algorithm + ":" + d.Hex
}

// IsZero reports whether d is the zero Digest.
func (d Digest) IsZero() bool { return d.Algorithm == "" && d.Hex == "" }

// MarshalText implements encoding.TextMarshaler.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts only the
// canonical form.
func (d *Digest) UnmarshalText(b []byte) error {
	p, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}
