package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, and that whatever it accepts
// re-encodes to a document that parses to the same digest. Seeds are
// testdata/*.json and the test manifest; run it longer with
// go test -fuzz FuzzParse ./manifest/.
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	good, err := testManifest().Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("Parse error %v is a %T, want a *ValidationError", err, err)
			}
			return
		}
		b, err := m.Encode()
		if err != nil {
			t.Fatalf("Parse accepted a manifest that Encode refuses: %v\n%s", err, data)
		}
		d, err := m.Digest()
		if err != nil {
			t.Fatal(err)
		}
		m2, err := Parse(b)
		if err != nil {
			t.Fatalf("the canonical encoding does not parse: %v\n%s\nfrom\n%s", err, b, data)
		}
		d2, err := m2.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if d != d2 || SHA256(b) != d {
			t.Fatalf("digest %s, re-parsed %s, sha256 of the encoding %s", d, d2, SHA256(b))
		}
		ind, err := m.Indent()
		if err != nil {
			t.Fatal(err)
		}
		if m3, err := Parse(ind); err != nil {
			t.Fatalf("the indented encoding does not parse: %v", err)
		} else if d3, _ := m3.Digest(); d3 != d {
			t.Fatalf("the indented encoding's digest %s != %s", d3, d)
		}
	})
}
