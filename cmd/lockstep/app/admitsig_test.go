package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// TestAdmitImageSignature: `admit --require-image-signature` with the
// manifest's --key as the images' trust: from the embedded material with
// no registry request (exit 0), another --image-key refused (exit 1),
// --require-embedded-signatures on a manifest that embeds nothing refused
// (exit 1), and the registry fallback down (exit 3).
func TestAdmitImageSignature(t *testing.T) {
	t.Parallel()
	r := sigtest.NewRelease(t, nil, "index", "linux/amd64", "linux/arm64")
	dir := t.TempDir()
	pub := filepath.Join(dir, "cosign.pub")
	otherPub := filepath.Join(dir, "other.pub")
	if err := os.WriteFile(pub, sigtest.PublicPEM(t, r.Key), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(otherPub, sigtest.PublicPEM(t, sigtest.Key(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	embedded := r.WriteManifest(t, r.Embed(t, r.Key, imagesig.Policy{}))
	bare := r.WriteManifest(t, nil)
	args := func(path string, more ...string) []string {
		return append([]string{"admit", "--manifest", path, "--release", "store-web", "--key", pub, "--image", "web",
			"--running", "digest:" + r.Platforms["linux/amd64"].DigestStr(), "--platform", "linux/amd64",
			"--state-dir", t.TempDir(), "--timeout", "10s", "--format", "json"}, more...)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		from string
		kind admission.Kind
		zero bool
	}{
		{"embedded", args(embedded, "--require-image-signature"), 0, admission.SignaturesEmbedded, "", true},
		{"embedded only", args(embedded, "--require-embedded-signatures"), 0, admission.SignaturesEmbedded, "", true},
		{"another image key", args(embedded, "--require-image-signature", "--image-key", otherPub), 1, admission.SignaturesEmbedded, admission.KindImageSignature, true},
		{"nothing embedded, embedded required", args(bare, "--require-embedded-signatures"), 1, "", admission.KindImageSignature, true},
		{"nothing embedded: the registry", args(bare, "--require-image-signature"), 0, admission.SignaturesRegistry, "", false},
	} {
		before := r.Reg.Requests()
		code, out, errOut := run(t, tc.args...)
		var d admission.Decision
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%s: the decision does not parse: %v\n%s\n%s", tc.name, err, out, errOut)
		}
		if code != tc.code || d.ImageSignature != tc.from || (tc.kind != "" && !d.Has(tc.kind)) {
			t.Errorf("%s: exit %d, imageSignature %q; want exit %d from %q with %q\n%s%s", tc.name, code, d.ImageSignature, tc.code, tc.from, tc.kind, out, errOut)
		}
		if n := r.Reg.Requests() - before; tc.zero != (n == 0) {
			t.Errorf("%s: %d registry requests (zero wanted: %v)", tc.name, n, tc.zero)
		}
	}

	code, out, _ := run(t, append(args(embedded, "--require-image-signature"), "--format", "text")...)
	if code != 0 || !strings.Contains(out, "signature image web: from the manifest's embedded material (no registry request)") {
		t.Errorf("text report: exit %d, want a line saying the signatures came from the manifest\n%s", code, out)
	}

	// Embedded material needs no registry; the fallback does.
	r.Reg.Server.Close()
	if code, out, errOut := run(t, args(embedded, "--require-image-signature")...); code != 0 {
		t.Errorf("registry gone, embedded: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, args(bare, "--require-image-signature")...); code != 3 || !strings.Contains(out, string(admission.KindDependencyUnreachable)) {
		t.Errorf("registry gone, nothing embedded: exit %d, want 3 (dependency-unreachable)\n%s%s", code, out, errOut)
	}
	// No signer at all for the images is a usage error.
	if code, _, errOut := run(t, "admit", "--manifest", embedded, "--release", "store-web", "--insecure-allow-unsigned", "--running", "digest:"+r.Platforms["linux/amd64"].DigestStr(),
		"--state-dir", t.TempDir(), "--require-image-signature"); code != 2 {
		t.Errorf("--require-image-signature without a key: exit %d, want 2\n%s", code, errOut)
	}
}
