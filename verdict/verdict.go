package verdict

import (
	"errors"
	"fmt"
)

// MismatchError says that something observed differs from what the
// manifest says. It is a verification failure, not a transport failure.
type MismatchError struct {
	// Subject names what was compared, e.g. "image web" or "asset app.js".
	Subject string
	Got     string
	Want    string
	// Reason is an optional short explanation.
	Reason string
}

func (e *MismatchError) Error() string {
	msg := e.Subject + ": "
	if e.Reason != "" {
		msg += e.Reason + ": "
	}
	return msg + fmt.Sprintf("got %s, want %s", orNone(e.Got), orNone(e.Want))
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// UnavailableError says that a dependency (a registry, the CDN, a store, an
// AWS API, the container runtime) could not be reached or did not answer
// usably, so nothing could be verified.
type UnavailableError struct {
	// Dependency names it, e.g. "registry 127.0.0.1:5000".
	Dependency string
	Err        error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%s unavailable: %v", e.Dependency, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Unavailable wraps err as an *UnavailableError for dependency, unless it
// already is one or is nil.
func Unavailable(dependency string, err error) error {
	if err == nil {
		return nil
	}
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return err
	}
	return &UnavailableError{Dependency: dependency, Err: err}
}

// IsMismatch reports whether err is, or wraps, a *MismatchError.
func IsMismatch(err error) bool {
	var me *MismatchError
	return errors.As(err, &me)
}

// IsUnavailable reports whether err is, or wraps, an *UnavailableError.
func IsUnavailable(err error) bool {
	var ue *UnavailableError
	return errors.As(err, &ue)
}

// OptionError says that an option given to a library call is invalid: a
// usage error (exit 2), neither a mismatch nor a dependency down. Option
// names it in the library's own words (a field of its options, e.g.
// "Keep"; alternatives joined by " or "), never a CLI flag: a CLI that
// wraps it names its own flag instead. Bad manifest content is a
// manifest.ValidationError, not an OptionError.
type OptionError struct {
	Option string
	Reason string
	// Err is the cause, if any.
	Err error
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Reason }

func (e *OptionError) Unwrap() error { return e.Err }
