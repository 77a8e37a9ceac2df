package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
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
	if len(m.Assets.Files) > 0 {
		if b, ok := m.canonicalFiles(); ok {
			return b, nil
		}
	}
	return m.canonicalAll()
}

// canonicalAll is canonical by encoding/json and the canonical pass over
// its output: the definition canonicalFiles must match.
func (m *Manifest) canonicalAll() ([]byte, error) {
	raw, err := marshal(m)
	if err != nil {
		return nil, err
	}
	return canonicalEncoded(raw)
}

// filesHole is where a manifest without files has them.
var filesHole = []byte(`"files":null`)

// canonicalFiles is canonical for a manifest with files, which are most of
// its bytes: the rest of the manifest as canonicalAll writes it, with the
// files written directly in their canonical form where canonicalAll wrote
// "files":null. Those are the bytes encoding/json and the canonical pass
// would write (TestCanonicalFiles, FuzzCanonicalFiles and FuzzParse hold
// them to it), for every Encode and every Digest: a 10,000-file manifest
// encodes in a quarter of the time and memory (BenchmarkEncode10k). False
// when the hole is not found once; canonicalAll then decides.
func (m *Manifest) canonicalFiles() ([]byte, bool) {
	c := *m
	c.Assets.Files = nil
	head, err := c.canonicalAll()
	if err != nil || bytes.Count(head, filesHole) != 1 {
		return nil, false
	}
	at := bytes.Index(head, filesHole) + len(`"files":`)
	size := len(head)
	for _, f := range m.Assets.Files {
		size += len(`{"contentType":,"entry":true,"path":,"served":,"sha256":,"size":}`) + 25 + len(f.ContentType) + len(f.Path) + len(f.Served) + len(f.SHA256)
		for _, l := range f.Loads {
			size += len(l) + 3
		}
	}
	out, err := appendFiles(append(make([]byte, 0, size), head[:at]...), m.Assets.Files)
	if err != nil {
		return nil, false
	}
	return append(out, head[at+len("null"):]...), true
}

// appendFiles appends files as canonicalAll writes them: each object's
// members in the order of their names (contentType, entry, loads, path,
// served, sha256, size), the omitempty ones left out when empty, each string as
// encoding/json writes it with no HTML escaping.
func appendFiles(b []byte, files []File) ([]byte, error) {
	var err error
	str := func(s string) {
		if err == nil {
			b, err = appendString(b, s)
		}
	}
	b = append(b, '[')
	for i, f := range files {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if f.ContentType != "" {
			b = append(b, `"contentType":`...)
			str(f.ContentType)
			b = append(b, ',')
		}
		if f.Entry {
			b = append(b, `"entry":true,`...)
		}
		if len(f.Loads) > 0 {
			b = append(b, `"loads":[`...)
			for j, l := range f.Loads {
				if j > 0 {
					b = append(b, ',')
				}
				str(l)
			}
			b = append(b, "],"...)
		}
		b = append(b, `"path":`...)
		str(f.Path)
		if f.Served != "" {
			b = append(b, `,"served":`...)
			str(f.Served)
		}
		b = append(b, `,"sha256":`...)
		str(f.SHA256)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, f.Size, 10)
		b = append(b, '}')
	}
	return append(b, ']'), err
}

// appendString appends s as a JSON string the way canonicalAll writes it:
// as it is when it is printable ASCII with no quote or backslash (every
// path and hash a manifest holds), and else as the canonical pass makes of
// marshal's string (which writes invalid UTF-8 as \ufffd, and the pass
// then as the character itself).
func appendString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, err := marshal(s)
			if err == nil {
				q, err = canonicalEncoded(q)
			}
			return append(b, q...), err
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
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
