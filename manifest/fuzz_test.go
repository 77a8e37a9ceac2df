package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics, and that whatever it accepts
// re-encodes to a document that parses to the same digest. Seeds are
// testdata/*.json and the test manifest; run it longer with
// go test -fuzz FuzzParse ./manifest/.
func FuzzParse(f *testing.F) {
	for _, doc := range seedDocuments(f) {
		f.Add(doc)
	}
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
		raw, err := marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if want, err := canonicalizeAny(raw); err != nil || !bytes.Equal(b, want) {
			t.Fatalf("Encode wrote\n%s\nthe general canonicalization (%v)\n%s", b, err, want)
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

// seedDocuments are testdata/*.json and, last, the test manifest's
// canonical encoding.
func seedDocuments(f *testing.F) [][]byte {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	var docs [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		docs = append(docs, b)
	}
	good, err := testManifest().Encode()
	if err != nil {
		f.Fatal(err)
	}
	return append(docs, good)
}

// FuzzParseAgrees holds Parse's one pass (decodeStrict) to decodeV1, the
// strict decode with encoding/json it replaced: whatever decodeStrict
// accepts, decodeV1 accepts as the same Manifest, field for field (nil and
// empty alike, since the canonical encoding tells them apart). What
// decodeStrict refuses, Parse hands to decodeV1, and the checks after the
// decode are the same code, so every input gets the old answer and error.
// Seeds are FuzzParse's and documents at the edges where the two decoders
// differ; run it longer with go test -fuzz FuzzParseAgrees ./manifest/.
func FuzzParseAgrees(f *testing.F) {
	docs := seedDocuments(f)
	good := docs[len(docs)-1]
	// Each edit, applied to each document it changes.
	edits := []struct{ from, to string }{
		{`"name":`, `"Name":`},                            // a key in another case
		{`"name":`, `"n\u0061me":`},                       // an escaped key
		{`"generation":`, `"generation":1,"generation":`}, // a duplicate key
		{`"kind":"`, `"kind":"\ud800`},                    // a lone surrogate
		{`Z"`, `+24:00"`},                                 // a zone past what v2 allows
		{`Z"`, `,5Z"`},                                    // a comma before the fraction
		{`Z"`, `.5Z"`},                                    // a fraction
		{`"cdn":[`, `"cdn":null,"x":[`},                   // an unknown member
		{`"size":`, `"size":1.0,"s":`},                    // a fractional size
		{`"bundle": "eyJ9"`, `"bundle": ""`},              // empty bytes
		{`"bundle": "eyJ9"`, `"bundle": null`},            // no bytes
		{`"bundle": "eyJ9"`, `"bundle": "ey\nJ9"`},        // a line break in base64
		{`"bundle": "eyJ9"`, `"bundle": [1]`},             // bytes as an array
	}
	for _, doc := range docs {
		f.Add(doc)
		for _, e := range edits {
			if ed := bytes.Replace(doc, []byte(e.from), []byte(e.to), 1); !bytes.Equal(ed, doc) {
				f.Add(ed)
			}
		}
	}
	f.Add(append(append([]byte{}, good...), " {}"...)) // trailing data
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		strict, err := decodeStrict(data)
		if err != nil {
			return // Parse takes decodeV1's answer
		}
		old, err := decodeV1(data)
		if err != nil {
			t.Fatalf("decodeStrict accepted what decodeV1 refuses (%v):\n%s", err, data)
		}
		if !reflect.DeepEqual(old, strict) {
			t.Fatalf("decodeV1 and decodeStrict decode different manifests:\n%#v\n%#v\nfrom\n%s", old, strict, data)
		}
	})
}
