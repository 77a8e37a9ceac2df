package app

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/cdn"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// TestFlagged: a library's option error reads with the command's flags,
// alternatives each mapped, and is a usage error.
func TestFlagged(t *testing.T) {
	t.Parallel()
	flags := map[string]string{"Keep": "--keep", "Identity.Subject": "--certificate-identity", "Identity.SubjectRegexp": "--certificate-identity-regexp"}
	for _, tc := range []struct {
		err  error
		want string
		code int
	}{
		{&verdict.OptionError{Option: "Keep", Reason: "must not be negative"}, "--keep: must not be negative", ExitInvalid},
		{&verdict.OptionError{Option: "Identity.Subject or Identity.SubjectRegexp", Reason: "keyless verification needs one"},
			"--certificate-identity or --certificate-identity-regexp: keyless verification needs one", ExitInvalid},
		// An option the command has no flag for keeps its name.
		{&verdict.OptionError{Option: "Other", Reason: "bad"}, "Other: bad", ExitInvalid},
		{fmt.Errorf("not an option error"), "not an option error", ExitUnverified},
	} {
		got := flagged(tc.err, flags)
		if got.Error() != tc.want || ExitCode(got) != tc.code {
			t.Errorf("flagged(%v) = %q, exit %d; want %q, exit %d", tc.err, got, ExitCode(got), tc.want, tc.code)
		}
	}
	// Unflagged, an option error is still invalid input.
	if code := ExitCode(fmt.Errorf("gc: %w", &verdict.OptionError{Option: "Keep", Reason: "x"})); code != ExitInvalid {
		t.Errorf("ExitCode(an OptionError) = %d, want %d", code, ExitInvalid)
	}
}

// TestExitHint: a moved tag's refusal names the flag that accepts one,
// which the registry library does not know.
func TestExitHint(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	err := &registry.MovedTagError{Tags: []registry.MovedTag{{Name: "web", Ref: "r/web:v1", Repository: "r/web", Tag: "v1"}}}
	if code := Exit(err, &b); code != ExitMismatch {
		t.Errorf("Exit(a moved tag) = %d, want %d", code, ExitMismatch)
	}
	want := "lockstep: " + err.Error() + "\nlockstep: --allow-moved-tag NAME accepts a moved tag on purpose\n"
	if b.String() != want {
		t.Errorf("Exit(a moved tag) said %q, want %q", b.String(), want)
	}
	b.Reset()
	Exit(&verdict.UnavailableError{Dependency: "CDN", Err: fmt.Errorf("1 of 1 checks compared the size only: %w", cdn.ErrSizeOnly)}, &b)
	if !strings.HasSuffix(b.String(), "\nlockstep: --full hashes the bytes\n") {
		t.Errorf("Exit(size only under --require-content) said %q, want it to name --full", b.String())
	}
}
