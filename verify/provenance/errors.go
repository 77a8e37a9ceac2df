package provenance

import (
	"strings"

	"github.com/lockstep-dev/lockstep/verdict"
)

// Check names the check of an attestation that failed, in the order they
// are made.
type Check string

// The checks, in order.
const (
	// CheckMissing: no attestation was found for the digest.
	CheckMissing Check = "missing"
	// CheckSignature: the envelope does not verify with the trusted key
	// or identity (another builder, a payload edited after signing), or
	// its material does not parse.
	CheckSignature Check = "signature"
	// CheckStatement: the signed payload is not an in-toto statement.
	CheckStatement Check = "statement"
	// CheckSubject: the statement's subject does not name the digest.
	CheckSubject Check = "subject"
	// CheckPredicateType: the predicate is not SLSA provenance.
	CheckPredicateType Check = "predicate-type"
	// CheckRepository: the provenance names another source repository.
	CheckRepository Check = "repository"
	// CheckCommit: the provenance names another commit of the
	// repository.
	CheckCommit Check = "commit"
)

// rank orders the checks: an attestation that fails a later check came
// closer to passing.
var rank = map[Check]int{CheckMissing: 0, CheckSignature: 1, CheckStatement: 2, CheckSubject: 3, CheckPredicateType: 4, CheckRepository: 5, CheckCommit: 6}

// Error is a refusal: no attestation of a digest passed every check. It
// describes the attestation that came closest. errors.As also finds it as
// a *verdict.MismatchError (exit 1).
type Error struct {
	// Subject names the digest, e.g. "image web linux/amd64 sha256:…".
	Subject string
	// Check is the check that failed.
	Check Check
	// Reason says why, e.g. "the provenance names commit 1234…".
	Reason string
	// Want and Got are what was expected and found, where known.
	Want, Got string
	// Found counts the attestations found for the digest.
	Found int
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Subject + ": provenance " + string(e.Check) + ": " + e.Reason)
	if e.Want != "" {
		b.WriteString("; expected " + e.Want)
	}
	if e.Got != "" {
		b.WriteString("; found " + e.Got)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// As lets errors.As find a refusal as a *verdict.MismatchError.
func (e *Error) As(target any) bool {
	if t, ok := target.(**verdict.MismatchError); ok {
		*t = &verdict.MismatchError{Subject: e.Subject, Reason: "provenance " + string(e.Check) + ": " + e.Reason, Got: e.Got, Want: e.Want}
		return true
	}
	return false
}
