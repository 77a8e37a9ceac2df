package verdict_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/lockstep-dev/lockstep/verdict"
)

func TestOptionError(t *testing.T) {
	err := error(&verdict.OptionError{Option: "Keep", Reason: "must not be negative", Err: fs.ErrInvalid})
	if got, want := err.Error(), "Keep: must not be negative"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("errors.Is(%v, fs.ErrInvalid) = false, want the cause kept", err)
	}
	if verdict.IsMismatch(err) || verdict.IsUnavailable(err) {
		t.Errorf("%v is a mismatch or unavailable; an option error is neither", err)
	}
}
