package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// manifest10k is the canonical encoding of a manifest of 10,000 assets.
func manifest10k(b *testing.B) []byte {
	b.Helper()
	m := testManifest()
	files := make([]File, 0, 10000)
	for i := 0; i < 10000; i++ {
		files = append(files, File{Path: fmt.Sprintf("assets/chunk-%05d.js", i), Size: int64(i), SHA256: strings.Repeat("c", 64), ContentType: "text/javascript"})
	}
	m.Assets.Files = files
	m.Assets.Fingerprint = Fingerprint(files)
	raw, err := m.Encode()
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkParse10k is a strict Parse of a manifest of 10,000 assets.
func BenchmarkParse10k(b *testing.B) {
	raw := manifest10k(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewSigned10k is what a consumer does with a fetched manifest of
// 10,000 assets: the strict Parse and the canonical digest.
func BenchmarkNewSigned10k(b *testing.B) {
	raw := manifest10k(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := NewSigned(raw, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckStructure10k is the duplicate-key, depth and trailing-data
// pass alone.
func BenchmarkCheckStructure10k(b *testing.B) {
	raw := manifest10k(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if err := checkStructure(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshal10k is bench/parse.sh's anchor: one plain json.Unmarshal
// of the same document, the floor of one pass of encoding/json (no strict
// checks, no validation, no digest).
func BenchmarkUnmarshal10k(b *testing.B) {
	raw := manifest10k(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		var m Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode10k is what record and publish do with a manifest of
// 10,000 assets: Validate and the canonical encoding (canonicalFiles).
func BenchmarkEncode10k(b *testing.B) {
	m, err := Parse(manifest10k(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshal10k is bench/parse.sh's anchor for the encode row: one
// plain json.Marshal of the same manifest (no validation, keys in struct
// order, HTML escaped), the floor of one pass of encoding/json.
func BenchmarkMarshal10k(b *testing.B) {
	m, err := Parse(manifest10k(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := json.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}
