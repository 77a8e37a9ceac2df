package pin

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/golden"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/pin/internal/rewrite"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// goldenReport is a fixed report with one of everything: an image, an
// index with a refused signature, a moved tag and a rewritten file.
func goldenReport() *Report {
	d := func(c string) manifest.Digest { return manifest.MustParseDigest("sha256:" + strings.Repeat(c, 64)) }
	return &Report{
		Images: []Image{
			{Pinned: "registry.example/app:v1@" + d("a").String(), Image: manifest.Image{
				Name: "app", Ref: "registry.example/app:v1", Repository: "registry.example/app", Tag: "v1", Digest: d("a"),
				MediaType: "application/vnd.oci.image.manifest.v1+json",
				Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: d("a"), Config: d("b")}},
			}, Signature: &Signature{Verified: true, Signer: "key SHA256:k", Policy: "platforms", Digests: []SignedDigest{{What: "image", Digest: d("a")}}}},
			{Pinned: "registry.example/web:v2@" + d("c").String(), Image: manifest.Image{
				Name: "web", Ref: "registry.example/web:v2", Repository: "registry.example/web", Tag: "v2", Digest: d("c"),
				MediaType: "application/vnd.oci.image.index.v1+json",
				Platforms: []manifest.Platform{{OS: "linux", Architecture: "arm64", Variant: "v8", Digest: d("d"), Config: d("e")}},
			}, Signature: &Signature{Signer: "key SHA256:k", Policy: "platforms", Digests: []SignedDigest{{What: "linux/arm64/v8", Digest: d("d")}},
				Error: "image web: linux/arm64/v8 <" + d("d").String() + "> carries no valid signature"}},
		},
		Moved: []registry.MovedTag{{Name: "web", Ref: "registry.example/web:v2", Repository: "registry.example/web", Tag: "v2",
			Previous: d("f"), Current: d("c"), Allowed: true}},
		Written: []rewrite.Result{{Path: "k8s/deploy.yaml", Format: rewrite.YAML, Changes: []rewrite.Change{
			{Line: 9, Old: "registry.example/app:v1", New: "registry.example/app:v1@" + d("a").String()}}}},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct{ format, file string }{
		{"text", "report.txt"},
		{"json", "report.json"},
	} {
		var b bytes.Buffer
		if err := goldenReport().Write(&b, tc.format); err != nil {
			t.Fatalf("Write(%s): %v", tc.format, err)
		}
		golden.Check(t, tc.file, b.String())
	}
}

// TestJSONRoundTrip: the JSON is the Report, so a consumer decodes it back.
func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport().Write(&b, "json"); err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatalf("decoding the JSON report: %v", err)
	}
	want := goldenReport()
	if len(r.Images) != 2 || r.Images[1].Signature == nil || r.Images[1].Signature.Error != want.Images[1].Signature.Error ||
		len(r.Moved) != 1 || r.Moved[0] != want.Moved[0] || len(r.Written) != 1 || r.Written[0].Changes[0] != want.Written[0].Changes[0] {
		t.Errorf("decoded report = %+v, want %+v", r, want)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport().Write(&b, "yaml"); err == nil || !strings.Contains(err.Error(), "text, json") || b.Len() != 0 {
		t.Errorf("Write(yaml) = %v, wrote %q; want an error naming the formats, nothing written", err, b.String())
	}
}
