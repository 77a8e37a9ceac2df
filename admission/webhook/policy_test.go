package webhook

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
)

func TestJudge(t *testing.T) {
	a := accepted(t, testManifest(42))
	d := func(c string) string { return digest(c).String() }
	tests := []struct {
		image     string
		unmanaged Unmanaged
		want      admission.Kind // "" for admitted
	}{
		{"registry.lockstep.test/store/web@" + d("1"), DenyUnmanaged, ""},                                // index
		{"registry.lockstep.test/store/web@" + d("4"), DenyUnmanaged, ""},                                // arm64 manifest
		{"registry.lockstep.test/store/web@" + d("5"), DenyUnmanaged, ""},                                // arm64 config
		{"registry.lockstep.test/store/web:v1.4.2@" + d("1"), DenyUnmanaged, ""},                         // tag and digest
		{"registry.lockstep.test/store/web:anything@" + d("2"), DenyUnmanaged, ""},                       // the digest decides
		{"nginx@" + d("8"), DenyUnmanaged, ""},                                                           // docker.io/library normalised
		{"docker.io/library/nginx@" + d("9"), DenyUnmanaged, ""},                                         //
		{"index.docker.io/library/nginx:1.27@" + d("a"), DenyUnmanaged, ""},                              //
		{"registry.lockstep.test/store/web@" + d("6"), DenyUnmanaged, admission.KindImageDigestMismatch}, // migrate's digest
		{"registry.lockstep.test/store/web:v1.4.2@" + d("b"), DenyUnmanaged, admission.KindImageDigestMismatch},
		{"registry.lockstep.test/store/web@sha512:" + strings.Repeat("1", 128), DenyUnmanaged, KindImageInvalid}, // ggcr: sha256 only
		{"registry.lockstep.test/store/web:v1.4.2", AllowUnmanaged, admission.KindImageNotPinned},
		{"registry.lockstep.test/store/web", DenyUnmanaged, admission.KindImageNotPinned},
		{"nginx", DenyUnmanaged, admission.KindImageNotPinned},
		{"", DenyUnmanaged, admission.KindImageNotPinned},
		{"registry.lockstep.test/store/WEB@" + d("1"), DenyUnmanaged, KindImageInvalid},
		{"registry.lockstep.test/store/web@sha256:123", DenyUnmanaged, KindImageInvalid},
		{"registry.lockstep.test/store/other@" + d("1"), DenyUnmanaged, KindImageUnmanaged},
		{"registry.lockstep.test/store/other@" + d("1"), AllowUnmanaged, ""},
		{"busybox:1.36", AllowUnmanaged, ""},
		{"registry.lockstep.test:5000/store/web@" + d("1"), DenyUnmanaged, KindImageUnmanaged}, // another registry
	}
	for _, tt := range tests {
		f := a.Judge(ImageRef{Field: "containers", Name: "c", Image: tt.image}, tt.unmanaged)
		var got admission.Kind
		if f != nil {
			got = f.Kind
		}
		if got != tt.want {
			msg := ""
			if f != nil {
				msg = f.Message
			}
			t.Errorf("Judge(%q, %s) = %q (%s), want %q", tt.image, tt.unmanaged, got, msg, tt.want)
		}
	}
}

func TestGoverns(t *testing.T) {
	a := accepted(t, testManifest(42))
	for repo, want := range map[string]bool{
		"nginx": true, "docker.io/library/nginx": true, "index.docker.io/library/nginx": true,
		"library/nginx": true, "registry.lockstep.test/store/web": true, "registry.lockstep.test/store": false, "busybox": false,
	} {
		if got := a.Governs(repo); got != want {
			t.Errorf("Governs(%q) = %v, want %v", repo, got, want)
		}
	}
}

func TestTagOf(t *testing.T) {
	for ref, want := range map[string]string{
		"app":                            "",
		"app:v1":                         "v1",
		"app:v1@sha256:abc":              "v1",
		"registry:5000/app":              "",
		"registry:5000/app@sha256:abc":   "",
		"registry:5000/app:v2@sha256:ab": "v2",
	} {
		if got := tagOf(ref); got != want {
			t.Errorf("tagOf(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestParseModes(t *testing.T) {
	for s, want := range map[string]Mode{"": Enforce, "enforce": Enforce, "warn": Warn} {
		if got, err := ParseMode(s); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	if _, err := ParseMode("Warn"); err == nil {
		t.Error(`ParseMode("Warn"): no error`)
	}
	for s, want := range map[string]Unmanaged{"": DenyUnmanaged, "deny": DenyUnmanaged, "allow": AllowUnmanaged} {
		if got, err := ParseUnmanaged(s); err != nil || got != want {
			t.Errorf("ParseUnmanaged(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	if _, err := ParseUnmanaged("ignore"); err == nil {
		t.Error(`ParseUnmanaged("ignore"): no error`)
	}
}
