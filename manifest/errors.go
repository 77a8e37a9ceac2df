package manifest

import "fmt"

// ValidationError says which field of a manifest is invalid and why. It is
// an input error: the document is wrong, not the world.
type ValidationError struct {
	// Field is a JSON path such as "images[0].platforms[1].config"; "" for
	// the document as a whole.
	Field  string
	Reason string
	Err    error
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return "invalid manifest: " + e.Reason
	}
	return fmt.Sprintf("invalid manifest: %s: %s", e.Field, e.Reason)
}

func (e *ValidationError) Unwrap() error { return e.Err }

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
