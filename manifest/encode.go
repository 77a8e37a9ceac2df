package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Encode returns the canonical encoding of m: JSON with object keys sorted,
// no insignificant white space and no HTML escaping. It validates m first.
func (m *Manifest) Encode() ([]byte, error) {
	if err := Validate(m); err != nil {
		return nil, err
	}
	return m.canonical()
}

// canonical is Encode for a manifest already validated.
func (m *Manifest) canonical() ([]byte, error) {
	raw, err := marshal(m)
	if err != nil {
		return nil, err
	}
	return canonicalEncoded(raw)
}

// Digest returns the SHA-256 of m's canonical encoding: the manifest's
// identity in stores, reports and signatures.
func (m *Manifest) Digest() (Digest, error) {
	if err := Validate(m); err != nil {
		return Digest{}, err
	}
	return m.digest()
}

// digest is Digest for a manifest already validated.
func (m *Manifest) digest() (Digest, error) {
	b, err := m.canonical()
	if err != nil {
		return Digest{}, err
	}
	return SHA256(b), nil
}

// Indent returns m's canonical encoding indented for people to read. Its
// Digest is the same as the compact form's.
func (m *Manifest) Indent() ([]byte, error) {
	b, err := m.Encode()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Canonicalize re-encodes a JSON document with sorted keys, no
// insignificant white space and no HTML escaping. Numbers are kept as
// written.
func Canonicalize(data []byte) ([]byte, error) {
	if out, err := canonicalFast(data); err == nil {
		return out, nil
	}
	return canonicalizeAny(data)
}

// canonicalizeAny is Canonicalize by decoding into any and encoding again:
// the definition canonicalFast must match.
func canonicalizeAny(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonicalizing: %w", err)
	}
	return marshal(v)
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
