package manifest

import (
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
