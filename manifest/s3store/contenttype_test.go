package s3store

import (
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

func TestContentType(t *testing.T) {
	for _, tc := range []struct {
		key, data, want string
	}{
		{"r/manifests/1.json", `{"apiVersion":"lockstep.dev/v1","kind":"ReleaseManifest"}`, manifest.MediaType},
		{"r/manifests/2.json", `{"apiVersion":"lockstep.dev/v2","kind":"ReleaseManifest"}`, manifest.MediaTypeV2},
		{"r/manifests/2.json", "{\n  \"assets\": {\"files\": [{\"path\": \"a\"}]},\n  \"apiVersion\": \"lockstep.dev/v2\"\n}", manifest.MediaTypeV2},
		{"r/manifests/3.json", `{"apiVersion":"lockstep.dev/v9"}`, manifest.MediaType},
		{"r/manifests/4.json", `not json`, manifest.MediaType},
		{"r/manifests/5.json", `["apiVersion","lockstep.dev/v2"]`, manifest.MediaType},
		{"r/channels/live", `{"apiVersion":"lockstep.dev/v2"}`, "application/json"},
		{"r/manifests/2.json" + manifest.SignatureSuffix, `MEUCIQ==`, "text/plain"},
	} {
		if got := contentType(tc.key, []byte(tc.data)); got != tc.want {
			t.Errorf("contentType(%q, %q) = %q, want %q", tc.key, tc.data, got, tc.want)
		}
	}
}
