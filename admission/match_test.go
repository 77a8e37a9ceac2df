package admission_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/manifest"
)

func TestMatch(t *testing.T) {
	multi := webImage()
	single := manifest.Image{Name: "web", Ref: "r/web:arm", Repository: "r/web", Digest: arm64, MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "arm64", Digest: arm64, Config: arm64Conf}}}
	obs := func(id manifest.Digest, repo ...manifest.Digest) *running.Observation {
		return &running.Observation{Source: "test", ImageID: id, RepoDigests: repo}
	}
	tests := []struct {
		name     string
		im       manifest.Image
		o        *running.Observation
		platform string
		want     string // "" for a mismatch
	}{
		{"index digest as image ID (containerd store)", multi, obs(index), "linux/amd64", "index"},
		{"platform manifest", multi, obs(amd64), "linux/amd64", "manifest"},
		{"platform config", multi, obs(amd64Conf), "linux/amd64", "config"},
		{"variant-less gate matches a variant", multi, obs(arm64Conf), "linux/arm64", "config"},
		{"other variant", multi, obs(arm64Conf), "linux/arm64/v7", ""},
		{"other platform's config", multi, obs(arm64Conf), "linux/amd64", ""},
		{"other platform's manifest", multi, obs(arm64), "linux/amd64", ""},
		{"stranger", multi, obs(stranger), "linux/amd64", ""},
		{"image ID decides over a matching repo digest", multi, obs(arm64Conf, index), "linux/amd64", ""},
		{"repo digest alone: the index", multi, obs(manifest.Digest{}, index), "linux/amd64", "index"},
		{"repo digests: one of another platform", multi, obs(manifest.Digest{}, index, arm64), "linux/amd64", ""},
		{"repo digests: none matches", multi, obs(manifest.Digest{}, stranger), "linux/amd64", ""},
		{"single-platform image on its platform", single, obs(arm64), "linux/arm64", "manifest"},
		// manifest.Image.Matches accepts this one; Match does not.
		{"single-platform image on another platform", single, obs(arm64), "linux/amd64", ""},
		{"single-platform config on another platform", single, obs(arm64Conf), "linux/amd64", ""},
		// Class 2: an index digest proves the release only on a platform the
		// index holds, and the runtime's own os/arch must be the gate's.
		{"index digest on a platform the index lacks", multi, obs(index), "linux/s390x", ""},
		{"index repo digest on a platform the index lacks", multi, obs(manifest.Digest{}, index), "windows/amd64", ""},
		{"runtime reports another os/arch for the index", multi, onPlatform(obs(index), "linux/arm64"), "linux/amd64", ""},
		{"runtime reports another os/arch for a config", multi, onPlatform(obs(amd64Conf), "linux/arm64"), "linux/amd64", ""},
		{"runtime reports another variant", multi, onPlatform(obs(arm64Conf), "linux/arm64/v7"), "linux/arm64/v8", ""},
		{"runtime reports a malformed platform", multi, onPlatform(obs(amd64Conf), "linux"), "linux/amd64", ""},
		{"runtime reports the gate's platform", multi, onPlatform(obs(amd64Conf), "linux/amd64"), "linux/amd64", "config"},
		{"runtime reports a variant, gate has none", multi, onPlatform(obs(index), "linux/arm64/v8"), "linux/arm64", "index"},
	}
	for _, tt := range tests {
		got, f := admission.Match(&tt.im, tt.o, tt.platform)
		if got != tt.want {
			t.Errorf("%s: Match = %q, %+v; want %q", tt.name, got, f, tt.want)
		}
		if (tt.want == "") != (f != nil) || f != nil && f.Kind != admission.KindImageDigestMismatch {
			t.Errorf("%s: finding = %+v", tt.name, f)
		}
	}
}

func onPlatform(o *running.Observation, p string) *running.Observation {
	o.Platform = p
	return o
}
