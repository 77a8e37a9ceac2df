package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// canonicalCases are documents whose canonical form canonicalFast must
// produce exactly as decoding into any and encoding again does.
var canonicalCases = []string{
	`{}`, `[]`, `"x"`, `12`, `-0.5e+10`, `true`, `null`,
	` { "b" : 1 , "a" : [ 1 , 2 , { } ] } `,
	`{"b":{"d":1,"c":2},"a":[{"z":0,"y":1}]}`,
	`{"é":1,"e":2,"E":3,"":4,"\u00e9x":5}`,
	`{"k\"q":1,"k":2,"k\\":3}`,
	`{"s":"\u0041\n\t\u0001 <&> \u2028 \u2029 / \/ \ud83d\ude00"}`,
	"{\"s\":\"\u2028 raw\",\"t\":\"\xff invalid\",\"\xfe\":1}",
	`{"n":1.000,"m":1e2,"o":-0,"p":123456789012345678901234567890}`,
	`[1,[2,[3,[4]]],{"a":{"b":{"c":{}}}}]`,
}

func TestCanonicalFastMatchesAny(t *testing.T) {
	docs := append([]string(nil), canonicalCases...)
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	m := testManifest()
	raw, err := marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, string(raw))
	for _, d := range docs {
		want, err := canonicalizeAny([]byte(d))
		if err != nil {
			t.Fatalf("canonicalizeAny(%.60q): %v", d, err)
		}
		got, err := canonicalFast([]byte(d))
		if err != nil {
			t.Fatalf("canonicalFast(%.60q): %v", d, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("canonicalFast(%.60q)\n got %s\nwant %s", d, got, want)
		}
	}
}

// TestCanonicalEncodedMatchesAny gives canonicalEncoded what it is for,
// encoding/json's output of Go values, including strings the encoder
// rewrites (invalid UTF-8, U+2028, control characters, HTML characters),
// and wants canonicalizeAny's result.
func TestCanonicalEncodedMatchesAny(t *testing.T) {
	values := []any{
		testManifest(),
		map[string]any{"b": "x\xffy", "a\u2028": "\u2029", "\xfe": []any{"\x01\n<&>", 1.5, nil}},
		map[string]string{"é": "e", "E": "é", "": "k\"q\\"},
		struct {
			Z string `json:"z"`
			A []byte `json:"a"`
			M string `json:"m"`
		}{"\xed\xa0\x80", []byte{0xff}, "\U0001F600"},
	}
	for _, d := range canonicalCases {
		var v any
		dec := json.NewDecoder(strings.NewReader(d))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	for _, v := range values {
		raw, err := marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := canonicalizeAny(raw)
		if err != nil {
			t.Fatalf("canonicalizeAny(%.60q): %v", raw, err)
		}
		got, err := canonicalEncoded(raw)
		if err != nil {
			t.Fatalf("canonicalEncoded(%.60q): %v", raw, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("canonicalEncoded(%.60q)\n got %s\nwant %s", raw, got, want)
		}
	}
}

// The fast path declines what the general path must decide: invalid JSON,
// trailing data, a duplicate key; Canonicalize then answers as before.
func TestCanonicalFastDeclines(t *testing.T) {
	for _, d := range []string{`{"a":1,"a":2}`, `{"b":1,"a":2,"a":3}`, `{} x`, `{"a":}`, ``, `{"a":1} {}`} {
		if _, err := canonicalFast([]byte(d)); err == nil {
			t.Errorf("canonicalFast(%q) succeeded; want it to decline", d)
		}
		want, werr := canonicalizeAny([]byte(d))
		got, gerr := Canonicalize([]byte(d))
		if !bytes.Equal(got, want) || (werr == nil) != (gerr == nil) {
			t.Errorf("Canonicalize(%q) = %s, %v; want %s, %v", d, got, gerr, want, werr)
		}
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, d := range canonicalCases {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := canonicalFast(data)
		if err != nil {
			return
		}
		want, err := canonicalizeAny(data)
		if err != nil {
			t.Fatalf("canonicalFast accepted %q, canonicalizeAny refused it: %v", data, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("canonicalFast(%q) = %s, want %s", data, got, want)
		}
	})
}

// TestCanonicalFiles holds the files written directly (canonicalFiles) to
// encoding/json and the canonical pass (canonicalAll) and to the general
// canonicalization, byte for byte, for files whose strings need every
// kind of escape, and checks that appendFiles knows every member of File.
func TestCanonicalFiles(t *testing.T) {
	odd := []string{"", "a\"b", `a\b`, "tab\there", "nl\n", "\x00\x1f\x7f", "<&>", "é", "\u2028\u2029", "\xff\xfe", "\xed\xa0\x80", "\U0001F600", "~"}
	var files []File
	for i, s := range odd {
		files = append(files,
			File{Path: s, SHA256: s, Size: int64(i)},
			File{Path: "p" + s, SHA256: strings.Repeat("a", 64), ContentType: s, Size: -int64(i)},
			File{Path: "q", SHA256: "h", ContentType: "text/css", Loads: []string{s, "x" + s}, Size: 1 << 62},
			File{Path: "r", SHA256: "h", Loads: []string{}},
			File{Path: "s" + s, SHA256: "h", Served: s},
			File{Path: "t" + s, SHA256: "h", Entry: true, ContentType: s, Loads: []string{s}},
			File{Path: "u" + s, SHA256: "h", Entry: true},
		)
	}
	for name, fs := range map[string][]File{"odd": files, "one": {{Path: "index.html", SHA256: strings.Repeat("0", 64)}}} {
		t.Logf("files %s", name)
		m := testManifest()
		m.Assets.Files = fs
		got := sameAsAll(t, m)
		raw, err := marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if general, err := canonicalizeAny(raw); err != nil || !bytes.Equal(got, general) {
			t.Errorf("%s: canonicalFiles differs from the general canonicalization (%v)", name, err)
		}
	}
	// A File member appendFiles does not write would be dropped from the
	// digest: every member must be one of the seven.
	known := map[string]bool{"contentType": true, "entry": true, "loads": true, "path": true, "served": true, "sha256": true, "size": true}
	ft := reflect.TypeFor[File]()
	for i := range ft.NumField() {
		name, _, _ := strings.Cut(ft.Field(i).Tag.Get("json"), ",")
		if !known[name] {
			t.Errorf("File.%s (json %q) is not written by appendFiles", ft.Field(i).Name, name)
		}
	}
	if ft.NumField() != len(known) {
		t.Errorf("File has %d fields, appendFiles writes %d", ft.NumField(), len(known))
	}
}

// TestCanonicalFilesHole tries to make canonicalFiles splice the files
// into the wrong place: every free string of the manifest, and the files'
// own, spells the hole ("files":null, escaped or not, and the start of
// another object). The bytes must still be canonicalAll's.
func TestCanonicalFilesHole(t *testing.T) {
	for _, bait := range []string{`"files":null`, `","files":null,"x":"`, `\"files\":null`, `{"assets":{"files":null}}`} {
		m := testManifest()
		m.Release.Name = bait
		m.Release.Source = &BuildSource{Repository: bait, Commit: bait, Ref: bait, WorkflowRunURL: bait}
		m.Images[0].Ref, m.Images[0].Tag = bait, bait
		m.Assets.CDN = append(m.Assets.CDN, bait)
		m.Assets.Origin = bait
		m.Assets.Files = append(m.Assets.Files, File{Path: bait, SHA256: bait, ContentType: bait, Loads: []string{bait}})
		m.Verification = &Verification{Signatures: []EmbeddedSignature{{Payload: bait, Signature: bait, Certificate: bait}}}
		sameAsAll(t, m)
	}
}

// sameAsAll fails t unless canonicalFiles writes m as canonicalAll does,
// and returns those bytes.
func sameAsAll(t *testing.T, m *Manifest) []byte {
	t.Helper()
	got, ok := m.canonicalFiles()
	if !ok {
		t.Fatal("canonicalFiles declined")
	}
	want, err := m.canonicalAll()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("canonicalFiles\n%q\ncanonicalAll\n%q", got, want)
	}
	return got
}

// FuzzCanonicalFiles holds canonicalFiles to canonicalAll for files of
// any strings and sizes (Parse's fuzzing only reaches valid paths).
func FuzzCanonicalFiles(f *testing.F) {
	f.Add("assets/app.js", "text/javascript", "assets/chunk.js", strings.Repeat("a", 64), int64(3))
	f.Add("a\"b\\c\x00", "\u2028<&>", "\xff\xed\xa0\x80", "é\U0001F600", int64(-1))
	f.Fuzz(func(t *testing.T, p, ct, load, sum string, size int64) {
		m := testManifest()
		m.Assets.Files = []File{{Path: p, ContentType: ct, Loads: []string{load, p}, SHA256: sum, Size: size}, {Path: load, SHA256: sum}}
		sameAsAll(t, m)
	})
}
