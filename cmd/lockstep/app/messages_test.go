package app_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestActionableMessages: a refusal for a missing flag or signature names
// the flag that fixes it, in the command the user ran.
func TestActionableMessages(t *testing.T) {
	t.Parallel()
	e := newAdmitEnv(t)
	live := filepath.Join(t.TempDir(), "live")
	for _, g := range []int64{6, 7} {
		if code, out, errs := run(t, "publish", "--allow-unsigned", "--store", live, e.manifest(t, g)); code != 0 {
			t.Fatalf("publish: exit %d\n%s\n%s", code, out, errs)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"record without --generation", []string{"record", "--release", "web", "--assets", t.TempDir(), "--cdn", "https://cdn.example.test/"},
			[]string{"--generation is required", `"auto"`}},
		{"rollback without a key", []string{"rollback", "--store", live, "--release", "store-web", "--to", "6"},
			[]string{"refusing to publish an unsigned manifest", "pass --sign-key KEY", "--allow-unsigned"}},
		{"publish of an unsigned manifest", []string{"publish", "--store", live, e.manifest(t, 8)},
			[]string{"refusing to publish an unsigned manifest", "lockstep sign --key KEY", "--allow-unsigned"}},
	} {
		code, out, errs := run(t, tc.args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s\n%s", tc.name, code, out, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr does not say %q\n%s", tc.name, w, errs)
			}
		}
	}
	if code, out, _ := run(t, "status", "--store", live, "--release", "store-web"); code != 0 || !strings.Contains(out, "generation  7") {
		t.Errorf("after the refused rollback and publish, status: exit %d\n%s; want generation 7 still live", code, out)
	}
}
