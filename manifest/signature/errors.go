package signature

import (
	"errors"

	"github.com/lockstep-dev/lockstep/verdict"
)

// ErrUnsigned is wrapped by the *Error for a manifest (or image) that has
// no signature at all.
var ErrUnsigned = errors.New("unsigned")

// Error is a verification failure: the signature is missing, does not
// parse, does not verify, or was made by someone the trust settings do not
// name. It is a refusal (exit 1), never a transport failure; errors.As
// also finds it as a *verdict.MismatchError.
type Error struct {
	// Subject names what was verified, e.g. "manifest store-web@7" or
	// "image web sha256:…".
	Subject string
	// Reason is a short explanation, e.g. "signature does not verify".
	Reason string
	// Got and Want describe the signer found and the signer required, where
	// known.
	Got, Want string
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	msg := e.Subject + ": " + e.Reason
	if e.Want != "" {
		msg += " (want " + e.Want
		if e.Got != "" {
			msg += ", got " + e.Got
		}
		msg += ")"
	}
	if e.Err != nil && !errors.Is(e.Err, ErrUnsigned) {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// As lets errors.As find a verification failure as a
// *verdict.MismatchError, the type the exit-code mapping and the admission
// engine know as a refusal.
func (e *Error) As(target any) bool {
	if t, ok := target.(**verdict.MismatchError); ok {
		*t = &verdict.MismatchError{Subject: e.Subject, Reason: e.Reason, Got: e.Got, Want: e.Want}
		return true
	}
	return false
}

// IsUnsigned reports whether err says that there was no signature at all.
func IsUnsigned(err error) bool { return errors.Is(err, ErrUnsigned) }
