package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSharedLockstep: $LOCKSTEP_TEST_BIN is used only when it names an
// executable by an absolute path; anything else is an error, never a
// silent build of another binary.
func TestSharedLockstep(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "lockstep")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("x"), 0o644)
	for _, tc := range []struct {
		env, want, err string
		ok             bool
	}{
		{env: "", ok: false},
		{env: exe, want: exe, ok: true},
		{env: "lockstep", ok: true, err: "absolute path"},
		{env: plain, ok: true, err: "not an executable"},
		{env: dir, ok: true, err: "not an executable"},
		{env: filepath.Join(dir, "missing"), ok: true, err: "not an executable"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv("LOCKSTEP_TEST_BIN", tc.env)
			got, ok, err := sharedLockstep()
			if ok != tc.ok || got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("sharedLockstep() = %q, %v, %v; want %q, %v, an error with %q", got, ok, err, tc.want, tc.ok, tc.err)
			}
		})
	}
}
