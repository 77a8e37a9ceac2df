package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestRecordAdmitProvenance: `record --require-provenance
// --embed-attestations` verifies the image's provenance against
// --source-repository/--source-commit and embeds it (a v2 manifest);
// `admit --require-provenance` then admits from the manifest alone, with
// no registry request. Another commit or builder refuses (exit 1, nothing
// written); no source or no builder is a usage error (exit 2); a manifest
// that embeds nothing is refused at the gate (provenance).
func TestRecordAdmitProvenance(t *testing.T) {
	t.Parallel()
	// Outside GitHub Actions, whatever the process's environment holds.
	env := noGitHub()
	const repo, commit = "https://github.com/acme/store", "0123456789abcdef0123456789abcdef01234567"
	r := sigtest.NewRelease(t, nil)
	builder := sigtest.Key(t)
	sigtest.AttestImage(t, r.Index, builder, sigtest.Provenance(t, repo, commit, r.Index), nil, nil, nil)
	dir := t.TempDir()
	builderPub, otherPub := filepath.Join(dir, "builder.pub"), filepath.Join(dir, "other.pub")
	for path, pem := range map[string][]byte{builderPub: sigtest.PublicPEM(t, builder), otherPub: sigtest.PublicPEM(t, sigtest.Key(t))} {
		if err := os.WriteFile(path, pem, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	record := func(out string, more ...string) (int, string) {
		args := append([]string{"record", "--release", "store-web", "--generation", "3", "--image", "web=" + r.Index.String(), "-o", out}, more...)
		code, _, errOut := runIn(t, env, args...)
		return code, errOut
	}
	source := []string{"--source-repository", repo, "--source-commit", commit}

	embedded := filepath.Join(dir, "embedded.json")
	if code, errOut := record(embedded, append(source, "--require-provenance", "--embed-attestations", "--provenance-key", builderPub)...); code != 0 {
		t.Fatalf("record --embed-attestations: exit %d\n%s", code, errOut)
	}
	m, _, err := manifest.ReadFile(embedded)
	if err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != manifest.APIVersionV2 || m.Verification == nil || len(m.Verification.Attestations) != 1 {
		t.Fatalf("recorded apiVersion %s, verification %+v; want v2 with one attestation", m.APIVersion, m.Verification)
	}
	bare := filepath.Join(dir, "bare.json")
	if code, errOut := record(bare, append(source, "--require-provenance", "--provenance-key", builderPub)...); code != 0 {
		t.Fatalf("record --require-provenance: exit %d\n%s", code, errOut)
	}
	if m, _, err := manifest.ReadFile(bare); err != nil || m.APIVersion != manifest.APIVersion || m.Verification != nil {
		t.Errorf("record without --embed-attestations: %v, %+v; want a v1 manifest embedding nothing", err, m)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		say  string
	}{
		{"another commit", []string{"--source-repository", repo, "--source-commit", strings.Repeat("f", 40), "--require-provenance", "--provenance-key", builderPub}, 1, "provenance commit"},
		{"another repository", []string{"--source-repository", "https://github.com/acme/other", "--source-commit", commit, "--require-provenance", "--provenance-key", builderPub}, 1, "provenance repository"},
		{"another builder", append(source, "--embed-attestations", "--provenance-key", otherPub), 1, "provenance signature"},
		{"no source", []string{"--require-provenance", "--provenance-key", builderPub}, 2, "--source-repository and --source-commit"},
		{"no builder", append(source, "--require-provenance"), 2, "--provenance-key"},
		{"a key without the check", append(source, "--provenance-key", builderPub), 2, "needs --require-provenance"},
	} {
		out := filepath.Join(t.TempDir(), "release.json")
		code, errOut := record(out, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.say) {
			t.Errorf("record, %s: exit %d, want %d saying %q\n%s", tc.name, code, tc.code, tc.say, errOut)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("record, %s: the manifest was written (%v)", tc.name, err)
		}
	}

	admit := func(path string, more ...string) (int, admission.Decision, string) {
		args := append([]string{"admit", "--manifest", path, "--release", "store-web", "--insecure-allow-unsigned", "--image", "web",
			"--running", "digest:" + r.Platforms["linux/amd64"].DigestStr(), "--platform", "linux/amd64",
			"--state-dir", t.TempDir(), "--timeout", "10s", "--format", "json"}, more...)
		code, out, errOut := runIn(t, env, args...)
		var d admission.Decision
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("the decision does not parse: %v\n%s\n%s", err, out, errOut)
		}
		return code, d, out + errOut
	}
	before := r.Reg.Requests()
	if code, _, out := admit(embedded, "--require-provenance", "--provenance-key", builderPub); code != 0 {
		t.Errorf("admit --require-provenance (embedded): exit %d, want 0\n%s", code, out)
	}
	if n := r.Reg.Requests() - before; n != 0 {
		t.Errorf("admit sent %d registry requests, want none", n)
	}
	for _, tc := range []struct {
		name string
		path string
		key  string
	}{{"another builder", embedded, otherPub}, {"nothing embedded", bare, builderPub}} {
		if code, d, out := admit(tc.path, "--require-provenance", "--provenance-key", tc.key); code != 1 || !d.Has(admission.KindProvenance) {
			t.Errorf("admit --require-provenance, %s: exit %d, want 1 with a provenance finding\n%s", tc.name, code, out)
		}
	}
	if code, _, errOut := runIn(t, env, "admit", "--manifest", embedded, "--release", "store-web", "--insecure-allow-unsigned", "--running", "digest:"+r.Platforms["linux/amd64"].DigestStr(),
		"--state-dir", t.TempDir(), "--require-provenance"); code != 2 || !strings.Contains(errOut, "--provenance-key") {
		t.Errorf("admit --require-provenance without a builder: exit %d, want 2 naming --provenance-key\n%s", code, errOut)
	}
}
