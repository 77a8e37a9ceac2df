package manifest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func testManifest() *Manifest {
	files := []File{
		{Path: "assets/app-1a2b.js", Size: 3, SHA256: strings.Repeat("a", 64), ContentType: "text/javascript"},
		{Path: "index.html", Size: 5, SHA256: strings.Repeat("b", 64)},
	}
	return &Manifest{
		APIVersion: APIVersion,
		Kind:       Kind,
		Release:    Release{Name: "store-web", Generation: 7, CreatedAt: time.Date(2021, 4, 5, 12, 0, 0, 0, time.UTC)},
		Images: []Image{{
			Name: "web", Ref: "registry.example/store/web:v1", Repository: "registry.example/store/web", Tag: "v1",
			Digest:    MustParseDigest("sha256:" + strings.Repeat("1", 64)),
			MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []Platform{{OS: "linux", Architecture: "amd64",
				Digest: MustParseDigest("sha256:" + strings.Repeat("2", 64)),
				Config: MustParseDigest("sha256:" + strings.Repeat("3", 64))}},
		}},
		Assets: Assets{CDN: []string{"https://cdn.example/store/"}, Files: files, Fingerprint: Fingerprint(files)},
	}
}

func TestRoundTrip(t *testing.T) {
	m := testManifest()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(Encode()) = %v", err)
	}
	b2, err := got.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) {
		t.Errorf("encoding is not stable:\n%s\n%s", b, b2)
	}
	ind, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	pm, err := Parse(ind)
	if err != nil {
		t.Fatalf("Parse(Indent()) = %v", err)
	}
	d1, _ := m.Digest()
	d2, _ := pm.Digest()
	if d1 != d2 {
		t.Errorf("digest of the indented form %s != %s", d2, d1)
	}
}

func TestParseRefuses(t *testing.T) {
	good, err := testManifest().Encode()
	if err != nil {
		t.Fatal(err)
	}
	s := string(good)
	tests := []struct {
		name, doc, field string
	}{
		{"duplicate key", strings.Replace(s, `"kind":`, `"kind":"ReleaseManifest","kind":`, 1), "kind"},
		{"unknown field", strings.Replace(s, `"kind":`, `"extra":1,"kind":`, 1), "extra"},
		{"trailing data", s + `{}`, ""},
		{"upper-case digest", strings.Replace(s, strings.Repeat("1", 64), "A"+strings.Repeat("1", 63), 1), ""},
		{"absolute path", strings.Replace(s, `"index.html"`, `"/index.html"`, 1), "assets.files[1].path"},
		{"dotdot path", strings.Replace(s, `"index.html"`, `"../index.html"`, 1), "assets.files[1].path"},
		{"backslash path", strings.Replace(s, `"index.html"`, `"a\\index.html"`, 1), "assets.files[1].path"},
		{"non-NFC path", strings.Replace(s, `"index.html"`, `"ze\u0301.html"`, 1), "assets.files[1].path"},
		{"wrong version", strings.Replace(s, APIVersion, "lockstep.dev/v9", 1), "apiVersion"},
		{"nested duplicate", strings.Replace(s, `"os":"linux"`, `"os":"linux","os":"linux"`, 1), "images[0].platforms[0].os"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			ve, ok := err.(*ValidationError)
			if !ok {
				t.Fatalf("Parse(%s) = %v, want a *ValidationError", tt.name, err)
			}
			if tt.field != "" && ve.Field != tt.field {
				t.Errorf("Parse(%s): field %q, want %q (%v)", tt.name, ve.Field, tt.field, err)
			}
		})
	}
}

// A manifest with images and no assets has no fingerprint; its encoding
// must parse (it used to write "fingerprint":"", which Parse refuses).
func TestImagesOnlyRoundTrip(t *testing.T) {
	m := testManifest()
	m.Assets = Assets{CDN: []string{}, Files: []File{}}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(b); err != nil {
		t.Errorf("Parse(Encode(an images-only manifest)) = %v\n%s", err, b)
	}
}

// fieldMatches reports whether field is want, or, for a want ending in
// "*", starts with the rest ("*" alone: any field, where the position in a
// malformed document depends on how far the scanner got).
func fieldMatches(field, want string) bool {
	if p, ok := strings.CutSuffix(want, "*"); ok {
		return strings.HasPrefix(field, p)
	}
	return field == want
}

// reasonMatches reports whether reason contains one of the |-separated
// wants.
func reasonMatches(reason, wants string) bool {
	for _, w := range strings.Split(wants, "|") {
		if strings.Contains(reason, w) {
			return true
		}
	}
	return false
}

// TestParseNamesTheField is the table of every bad input the format
// refuses; each error must be a *ValidationError naming the field.
func TestParseNamesTheField(t *testing.T) {
	good, err := testManifest().Encode()
	if err != nil {
		t.Fatal(err)
	}
	s := string(good)
	hex := func(c string) string { return strings.Repeat(c, 64) }
	rep := func(old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("the test manifest has no %q", old)
		}
		return strings.Replace(s, old, new, 1)
	}
	withSource := rep(`"release":{`, `"release":{"source":{"commit":"a","repository":"r"},`)
	// 20 distinct keys: past the keys checkStructure compares one by one.
	var manyKeys string
	for i := range 20 {
		manyKeys += fmt.Sprintf(`"x%02d":1,`, i)
	}
	tests := []struct {
		name, doc, field, reason string
	}{
		// Unknown fields, at every depth, and other spellings of known ones.
		{"unknown field at the top", rep(`"kind":`, `"extra":1,"kind":`), "extra", "unknown field"},
		{"unknown field in release", rep(`"generation":`, `"extra":1,"generation":`), "release.extra", "unknown field"},
		{"unknown field in source", strings.Replace(withSource, `"commit":"a"`, `"commit":"a","branch":"b"`, 1), "release.source.branch", "unknown field"},
		{"unknown field in an image", rep(`"mediaType":`, `"extra":1,"mediaType":`), "images[0].extra", "unknown field"},
		{"unknown field in a platform", rep(`"os":"linux"`, `"os":"linux","osVersion":"1"`), "images[0].platforms[0].osVersion", "unknown field"},
		{"unknown field in assets", rep(`"cdn":`, `"extra":1,"cdn":`), "assets.extra", "unknown field"},
		{"unknown field in a file", rep(`"path":"index.html"`, `"path":"index.html","mode":420`), "assets.files[1].mode", "unknown field"},
		{"a key in another case", rep(`"kind":`, `"Kind":"x","kind":`), "Kind", "unknown field"},
		{"a nested key in another case", rep(`"generation":7`, `"generation":7,"Generation":1`), "release.Generation", "unknown field"},
		// Duplicate keys, at every depth.
		{"duplicate key at the top", rep(`"kind":`, `"kind":"ReleaseManifest","kind":`), "kind", "duplicate key"},
		{"duplicate key in release", rep(`"generation":7`, `"generation":7,"generation":8`), "release.generation", "duplicate key"},
		{"duplicate key in source", strings.Replace(withSource, `"commit":"a"`, `"commit":"a","commit":"b"`, 1), "release.source.commit", "duplicate key"},
		{"duplicate key in an image", rep(`"name":"web"`, `"name":"web","name":"api"`), "images[0].name", "duplicate key"},
		{"duplicate key in a platform", rep(`"os":"linux"`, `"os":"linux","os":"linux"`), "images[0].platforms[0].os", "duplicate key"},
		{"duplicate key in assets", rep(`"cdn":`, `"cdn":[],"cdn":`), "assets.cdn", "duplicate key"},
		{"duplicate key in a file", rep(`"path":"index.html"`, `"path":"index.html","path":"other.html"`), "assets.files[1].path", "duplicate key"},
		{"duplicate key, escaped", rep(`"kind":`, `"kind":"ReleaseManifest","\u006bind":`), "kind", "duplicate key"},
		{"duplicate key in an object of many keys", rep(`"kind":`, manyKeys+`"x05":2,"kind":`), "x05", "duplicate key"},
		{"duplicate key, the last of many", rep(`"kind":`, manyKeys+`"x19":2,"kind":`), "x19", "duplicate key"},
		// The document as a whole.
		{"trailing object", s + `{}`, "", "trailing data"},
		{"trailing garbage", s + " x", "", "trailing data"},
		{"a second document", s + "\n" + s, "", "trailing data"},
		{"over MaxSize", s + strings.Repeat(" ", MaxSize), "", "limit"},
		{"empty", "", "", "empty document|malformed JSON"},
		{"truncated", s[:len(s)/2], "*", "malformed JSON"},
		{"not an object", `[1]`, "", "not a JSON object"},
		{"nested too deep", rep(`"cdn":["https://cdn.example/store/"]`, `"cdn":[`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`]`), "assets.cdn[0]*", "nested deeper"},
		{"wrong version", rep(APIVersion, "lockstep.dev/v9"), "apiVersion", "not a known version"},
		{"wrong kind", rep(`"kind":"ReleaseManifest"`, `"kind":"Release"`), "kind", "is not"},
		// Digests: upper-case hex, wrong length, unknown algorithm.
		{"upper-case image digest", rep(hex("1"), "A"+strings.Repeat("1", 63)), "images[0].digest", "upper-case"},
		{"upper-case config digest", rep(hex("3"), strings.ToUpper("ab")+strings.Repeat("3", 62)), "images[0].platforms[0].config", "upper-case"},
		{"short platform digest", rep(hex("2"), strings.Repeat("2", 63)), "images[0].platforms[0].digest", "wants 64 hex digits"},
		{"long image digest", rep(hex("1"), strings.Repeat("1", 65)), "images[0].digest", "wants 64 hex digits"},
		{"unknown algorithm", rep("sha256:"+hex("1"), "md5:"+strings.Repeat("1", 32)), "images[0].digest", "unknown algorithm"},
		{"no algorithm", rep("sha256:"+hex("1"), hex("1")), "images[0].digest", "algorithm:hex"},
		{"non-hex digest", rep(hex("1"), "g"+strings.Repeat("1", 63)), "images[0].digest", "not a hex digit"},
		{"empty fingerprint", rep(`"fingerprint":"sha256:`, `"fingerprint":"","x":"`), "assets.fingerprint", "algorithm:hex"},
		{"upper-case file hash", rep(hex("b"), strings.Repeat("B", 64)), "assets.files[1].sha256", "upper-case"},
		{"short file hash", rep(hex("b"), strings.Repeat("b", 40)), "assets.files[1].sha256", "64 hex digits"},
		// Asset paths.
		{"absolute path", rep(`"index.html"`, `"/index.html"`), "assets.files[1].path", "absolute"},
		{"dot-dot path", rep(`"index.html"`, `"../index.html"`), "assets.files[1].path", `".." segment`},
		{"dot-dot inside a path", rep(`"index.html"`, `"x/../../index.html"`), "assets.files[1].path", `".." segment`},
		{"dot segment", rep(`"index.html"`, `"./index.html"`), "assets.files[1].path", `"." segment`},
		{"empty segment", rep(`"index.html"`, `"x//index.html"`), "assets.files[1].path", "empty segment"},
		{"backslash", rep(`"index.html"`, `"x\\index.html"`), "assets.files[1].path", "backslash"},
		{"control character", rep(`"index.html"`, `"index\u0007.html"`), "assets.files[1].path", "control character"},
		{"newline", rep(`"index.html"`, `"index\n.html"`), "assets.files[1].path", "control character"},
		{"non-NFC", rep(`"index.html"`, `"ze\u0301.html"`), "assets.files[1].path", "normal form C"},
		{"empty path", rep(`"index.html"`, `""`), "assets.files[1].path", "empty"},
		{"percent in a path", rep(`"index.html"`, `"index%2ehtml"`), "assets.files[1].path", "'%'"},
		{"leading space", rep(`"index.html"`, `" index.html"`), "assets.files[1].path", "leading or trailing space"},
		{"trailing space in a segment", rep(`"index.html"`, `"img /index.html"`), "assets.files[1].path", "leading or trailing space"},
		{"bidi override", rep(`"index.html"`, `"index\u202egnp.html"`), "assets.files[1].path", "format character"},
		{"zero-width space", rep(`"index.html"`, `"index\u200b.html"`), "assets.files[1].path", "format character"},
		{"byte-order mark", rep(`"index.html"`, `"index\ufeff.html"`), "assets.files[1].path", "format character"},
		{"no-break space", rep(`"index.html"`, `"index\u00a0.html"`), "assets.files[1].path", "space character"},
		{"narrow no-break space", rep(`"index.html"`, `"index\u202f.html"`), "assets.files[1].path", "space character"},
		// Text: never replaced.
		{"invalid UTF-8", rep(`"index.html"`, "\"index\xff.html\""), "", "not valid UTF-8"},
		{"lone high surrogate", rep(`"index.html"`, `"index\ud800.html"`), "", "lone surrogate"},
		{"lone low surrogate", rep(`"index.html"`, `"index\udc00.html"`), "", "lone surrogate"},
		{"high surrogate then a non-surrogate escape", rep(`"index.html"`, `"index\ud800\u0041.html"`), "", "lone surrogate"},
		{"lone surrogate in a key", rep(`"kind":`, `"\ud800":1,"kind":`), "", "lone surrogate"},
		// The file list and its fingerprint.
		{"unsorted files", rep(`"assets/app-1a2b.js"`, `"z.js"`), "assets.files[1].path", "not sorted"},
		{"duplicate files", rep(`"index.html"`, `"assets/app-1a2b.js"`), "assets.files[1].path", "appears twice"},
		{"wrong fingerprint", strings.Replace(s, testManifest().Assets.Fingerprint.Hex, hex("0"), 1), "assets.fingerprint", "the files give"},
		{"negative size", rep(`"size":5`, `"size":-5`), "assets.files[1].size", "negative"},
		// Other fields.
		{"generation 0", rep(`"generation":7`, `"generation":0`), "release.generation", "at least 1"},
		{"generation over 2^53-1", rep(`"generation":7`, `"generation":9007199254740992`), "release.generation", "at most"},
		{"generation at the int64 limit", rep(`"generation":7`, `"generation":9223372036854775807`), "release.generation", "at most"},
		{"fractional generation", rep(`"generation":7`, `"generation":7.5`), "release.generation", "want int64"},
		{"bad release name", rep(`"name":"store-web"`, `"name":"Store Web"`), "release.name", "lower-case"},
		{"missing createdAt", rep(`"createdAt":"2021-04-05T12:00:00Z",`, ``), "release.createdAt", "required"},
		{"expiry before creation", rep(`"createdAt":"2021-04-05T12:00:00Z"`, `"createdAt":"2021-04-05T12:00:00Z","expiresAt":"2021-04-05T11:00:00Z"`), "release.expiresAt", "not after"},
		{"a CDN that is not http", rep(`"https://cdn.example/store/"`, `"ftp://cdn.example/"`), "assets.cdn[0]", "http"},
		{"a CDN with a query", rep(`"https://cdn.example/store/"`, `"https://cdn.example/?a=1"`), "assets.cdn[0]", "query"},
		{"a CDN with an empty query", rep(`"https://cdn.example/store/"`, `"https://cdn.example/?"`), "assets.cdn[0]", "query"},
		{"a CDN with an empty fragment", rep(`"https://cdn.example/store/"`, `"https://cdn.example/#"`), "assets.cdn[0]", "fragment"},
		{"a CDN with port 0", rep(`"https://cdn.example/store/"`, `"https://cdn.example:0/"`), "assets.cdn[0]", "port"},
		{"a CDN with port 65536", rep(`"https://cdn.example/store/"`, `"https://cdn.example:65536/"`), "assets.cdn[0]", "port"},
		{"a CDN with an empty port", rep(`"https://cdn.example/store/"`, `"https://cdn.example:/"`), "assets.cdn[0]", "port"},
		{"a CDN with a zero-padded port", rep(`"https://cdn.example/store/"`, `"https://cdn.example:0443/"`), "assets.cdn[0]", "port"},
		{"a CDN with a dot-dot segment", rep(`"https://cdn.example/store/"`, `"https://cdn.example/a/../store/"`), "assets.cdn[0]", `".." segment`},
		{"a CDN with an encoded dot-dot segment", rep(`"https://cdn.example/store/"`, `"https://cdn.example/a/%2e%2e/store/"`), "assets.cdn[0]", `".." segment`},
		{"a CDN with a dot segment", rep(`"https://cdn.example/store/"`, `"https://cdn.example/./store/"`), "assets.cdn[0]", `"." segment`},
		{"a CDN with an empty segment", rep(`"https://cdn.example/store/"`, `"https://cdn.example//store/"`), "assets.cdn[0]", "empty path segment"},
		{"a CDN twice", rep(`"cdn":["https://cdn.example/store/"]`, `"cdn":["https://cdn.example/store/","https://CDN.example:443/store"]`), "assets.cdn[1]", "again"},
		{"an image without platforms", rep(`"platforms":[{`, `"platforms":[],"x":[{`), "images[0].x", "unknown field"},
		{"a wrong type", rep(`"images":[`, `"images":[1,`), "images", "want manifest.Image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.doc))
			ve, ok := err.(*ValidationError)
			if !ok {
				t.Fatalf("Parse = %+v, %v; want a *ValidationError", m, err)
			}
			if !fieldMatches(ve.Field, tt.field) || !reasonMatches(ve.Reason, tt.reason) {
				t.Errorf("Parse: field %q, reason %q; want field %q, a reason containing %q", ve.Field, ve.Reason, tt.field, tt.reason)
			}
		})
	}
}
