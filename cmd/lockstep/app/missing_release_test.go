package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
)

// TestMissingRelease: a release, channel or store that does not exist is
// one answer in every command that reads a channel: exit 3, and a message
// that lists what the store does hold (or says it holds nothing), so that a
// mistyped name and a wrong --store are told apart from a store that is
// down. The boot gate's finding is release-not-found, never
// dependency-unreachable.
func TestMissingRelease(t *testing.T) {
	t.Parallel()
	e := newAdmitEnv(t)
	dir := t.TempDir()
	live := filepath.Join(dir, "live")
	for _, ch := range []string{"production", "staging"} {
		if code, out, errs := run(t, "publish", "--allow-unsigned", "--store", live, "--channel", ch, e.manifest(t, 7)); code != 0 {
			t.Fatalf("publish: exit %d\n%s\n%s", code, out, errs)
		}
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, store, release, channel string
		want                          []string
	}{
		{"a mistyped release", live, "store-wbe", "production", []string{"release store-wbe is not in store", "which holds store-web"}},
		{"a channel the release lacks", live, "store-web", "prod", []string{"release store-web has no channel prod", "its channels: production, staging"}},
		{"an empty store", empty, "store-web", "production", []string{"holds no release", "is --store right?"}},
		{"a store that does not exist", filepath.Join(dir, "nowhere"), "store-web", "production", []string{"holds no release", "is --store right?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := []string{"--store", tc.store, "--release", tc.release, "--channel", tc.channel}
			for _, args := range [][]string{
				append([]string{"status"}, src...),
				append([]string{"manifest", "get", "--insecure-allow-unsigned"}, src...),
				append([]string{"fleet", "check", "--insecure-allow-unsigned", "http://127.0.0.1:1/"}, src...),
				e.from(src),
			} {
				code, out, errs := run(t, args...)
				if code != 3 {
					t.Errorf("lockstep %s: exit %d, want 3\n%s\n%s", strings.Join(args[:2], " "), code, out, errs)
				}
				for _, w := range tc.want {
					if !strings.Contains(out+errs, w) {
						t.Errorf("lockstep %s: the answer does not say %q\n%s\n%s", strings.Join(args[:2], " "), w, out, errs)
					}
				}
			}
			code, out, errs := run(t, e.from(src, "--format", "json")...)
			var d admission.Decision
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatalf("admit --format json: exit %d, stdout is not a decision: %v\n%s\n%s", code, err, out, errs)
			}
			if code != 3 || d.Allowed || !d.Unverified || !d.Has(admission.KindReleaseNotFound) || d.Has(admission.KindDependencyUnreachable) {
				t.Errorf("admit: exit %d, findings %+v; want 3 with release-not-found alone", code, d.Findings)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("reading a store that does not exist created it")
	}
}
