package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/cdn"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// The exit codes, documented in the README's "Exit codes and output" table
// and, for each command, in its --help (describe).
const (
	// ExitOK: verified, or the command did what it was asked.
	ExitOK = 0
	// ExitMismatch: a mismatch or a refusal.
	ExitMismatch = 1
	// ExitInvalid: a usage error or invalid input.
	ExitInvalid = 2
	// ExitUnverified: could not verify, because a dependency failed.
	ExitUnverified = 3
)

// exitError carries an exit code chosen by a command, e.g. a refusal whose
// report is already on stdout.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usage marks err as a usage or input error (exit 2).
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: ExitInvalid, err: err}
}

// refused is a refusal whose details the command has already rendered; err
// (optional) is said on stderr.
func refused(err error) error { return &exitError{code: ExitMismatch, err: err} }

// unverified is a could-not-verify whose details the command has already
// rendered.
func unverified(err error) error { return &exitError{code: ExitUnverified, err: err} }

// ExitCode maps an error from a command to its exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	var ve *manifest.ValidationError
	var ge *manifest.GenerationError
	var wr *manifest.WrongReleaseError
	var me *verdict.MismatchError
	var ue *verdict.UnavailableError
	var oe *verdict.OptionError
	var in interface{ InvalidInput() bool }
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ve), errors.As(err, &oe):
		return ExitInvalid
	case errors.As(err, &ge), errors.As(err, &wr), errors.As(err, &me):
		return ExitMismatch
	case errors.As(err, &ue), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ExitUnverified
	case errors.As(err, &in) && in.InvalidInput():
		// A library's input error, e.g. registry.ReferenceError.
		return ExitInvalid
	}
	// Anything else is a failure to verify: fail closed.
	return ExitUnverified
}

// Exit reports err on w (unless a command already did) and returns the
// exit code for it.
func Exit(err error, w io.Writer) int {
	code := ExitCode(err)
	if err != nil && err.Error() != "" {
		fmt.Fprintf(w, "lockstep: %v\n", err)
		if h := hint(err); h != "" {
			fmt.Fprintf(w, "lockstep: %s\n", h)
		}
	}
	return code
}

// hint names the flag that lifts a library's refusal, which the library,
// knowing no flags, does not; "" for none.
func hint(err error) string {
	var mt *registry.MovedTagError
	if errors.As(err, &mt) {
		return "--allow-moved-tag NAME accepts a moved tag on purpose"
	}
	if errors.Is(err, cdn.ErrSizeOnly) {
		return "--full hashes the bytes"
	}
	return ""
}

// inputError makes a file that cannot be read (missing, a directory, no
// permission) an input error (exit 2); other errors keep their type.
func inputError(flag string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return usage(fmt.Errorf("%s: %w", flag, err))
	}
	return fmt.Errorf("%s: %w", flag, err)
}

// flagged names the command's flags in a library's *verdict.OptionError:
// each option it names (alternatives joined by " or ") becomes the flag
// that flags maps it to, so that the library speaks of its options and the
// user reads of flags. The result is a usage error (exit 2); an err that
// holds no option error is returned as it is. The message is rebuilt from
// the option error alone: call it on what the library returned, before
// wrapping it.
func flagged(err error, flags map[string]string) error {
	var oe *verdict.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	names := strings.Split(oe.Option, " or ")
	for i, n := range names {
		if f, ok := flags[n]; ok {
			names[i] = f
		}
	}
	return usage(&verdict.OptionError{Option: strings.Join(names, " or "), Reason: oe.Reason, Err: oe.Err})
}
