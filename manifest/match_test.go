package manifest

import (
	"strings"
	"testing"
)

func TestIdentify(t *testing.T) {
	d := func(c string) Digest { return MustParseDigest("sha256:" + strings.Repeat(c, 64)) }
	index := &Image{Name: "web", Digest: d("1"), Platforms: []Platform{
		{OS: "linux", Architecture: "amd64", Digest: d("2"), Config: d("3")},
		{OS: "linux", Architecture: "arm64", Variant: "v8", Digest: d("4"), Config: d("5")},
	}}
	single := &Image{Name: "web", Digest: d("6"), Platforms: []Platform{
		{OS: "linux", Architecture: "arm64", Digest: d("6"), Config: d("7")},
	}}
	oneOfIndex := &Image{Name: "web", Digest: d("8"), Platforms: []Platform{
		{OS: "linux", Architecture: "arm64", Digest: d("9"), Config: d("a")},
	}}
	tests := []struct {
		name     string
		im       *Image
		d        Digest
		platform string
		want     string
		other    string
	}{
		{"index digest", index, d("1"), "linux/amd64", MatchIndex, ""},
		{"index digest, any platform", index, d("1"), "", MatchIndex, ""},
		{"platform manifest", index, d("2"), "linux/amd64", MatchManifest, ""},
		{"platform config", index, d("3"), "linux/amd64", MatchConfig, ""},
		{"another platform's manifest", index, d("4"), "linux/amd64", "", "linux/arm64/v8"},
		{"another platform's config", index, d("5"), "linux/amd64", "", "linux/arm64/v8"},
		{"a variant-less platform matches a variant", index, d("4"), "linux/arm64", MatchManifest, ""},
		{"another variant", index, d("4"), "linux/arm64/v7", "", "linux/arm64/v8"},
		{"any platform: a platform's config", index, d("5"), "", MatchConfig, ""},
		{"a stranger", index, d("f"), "linux/amd64", "", ""},
		{"the zero digest", index, Digest{}, "linux/amd64", "", ""},
		{"single-platform image on its platform", single, d("6"), "linux/arm64", MatchManifest, ""},
		{"single-platform config on its platform", single, d("7"), "linux/arm64", MatchConfig, ""},
		{"single-platform image on another platform", single, d("6"), "linux/amd64", "", "linux/arm64"},
		{"single-platform config on another platform", single, d("7"), "linux/amd64", "", "linux/arm64"},
		{"single-platform image, any platform", single, d("6"), "", MatchManifest, ""},
		{"an index of one platform, on another (class 2: an index digest on a platform it does not hold)", oneOfIndex, d("8"), "linux/amd64", "", ""},
		{"an index of one platform, on it", oneOfIndex, d("8"), "linux/arm64", MatchIndex, ""},
		{"an index of one platform, any platform", oneOfIndex, d("8"), "", MatchIndex, ""},
		{"an index of one platform: its manifest elsewhere", oneOfIndex, d("9"), "linux/amd64", "", "linux/arm64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, other := tt.im.Identify(tt.d, tt.platform)
			otherS := ""
			if other != nil {
				otherS = other.String()
			}
			if got != tt.want || otherS != tt.other {
				t.Errorf("Identify(%s, %q) = %q, other %q; want %q, other %q", tt.d, tt.platform, got, otherS, tt.want, tt.other)
			}
			if m := tt.im.Matches(tt.d, tt.platform); m != (tt.want != "") {
				t.Errorf("Matches(%s, %q) = %v, want %v (Identify's rule)", tt.d, tt.platform, m, tt.want != "")
			}
		})
	}
}
