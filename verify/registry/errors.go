package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/lockstep-dev/lockstep/verdict"
)

// ReferenceError says that an image reference (or a platform) does not
// parse. Nothing was sent to a registry.
type ReferenceError struct {
	// Ref is the reference as given.
	Ref string
	Err error
}

func (e *ReferenceError) Error() string {
	return fmt.Sprintf("invalid image reference %q: %v", e.Ref, e.Err)
}

func (e *ReferenceError) Unwrap() error { return e.Err }

// InvalidInput reports that this is an input error (exit 2).
func (e *ReferenceError) InvalidInput() bool { return true }

// NotFoundError says that the registry answered, and the repository, tag or
// digest does not exist there.
type NotFoundError struct {
	// Ref is the reference as given; What is what was looked up, e.g.
	// "127.0.0.1:5000/app:v1" or ".../app@sha256:…".
	Ref, What string
	// Err is the registry's answer (a *transport.Error).
	Err error
}

// ErrImageNotFound is what every *NotFoundError matches with errors.Is.
var ErrImageNotFound = errors.New("image not found")

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: %s does not exist in the registry", e.Ref, e.What)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrImageNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrImageNotFound }

// InvalidInput reports that this is an input error (exit 2): the reference
// names nothing.
func (e *NotFoundError) InvalidInput() bool { return true }

// PlatformError says that an index has no image for the wanted platform
// (or, with Want empty, no image at all, only attestations or artifacts).
type PlatformError struct {
	Ref  string
	Want string
	// Available lists the index's image platforms, os/arch[/variant].
	Available []string
}

func (e *PlatformError) Error() string {
	if e.Want == "" {
		return fmt.Sprintf("%s: the index holds no image manifest", e.Ref)
	}
	have := "none"
	if len(e.Available) > 0 {
		have = strings.Join(e.Available, ", ")
	}
	return fmt.Sprintf("%s: no image for platform %s (the image has %s)", e.Ref, e.Want, have)
}

// InvalidInput reports that this is an input error (exit 2).
func (e *PlatformError) InvalidInput() bool { return true }

// NestedIndexError refuses an index that holds another index: which of
// the nested index's images a runtime pulls is not something lockstep
// guesses. Pin the nested index by its own digest instead.
type NestedIndexError struct {
	Ref string
	// Digest is the nested index's.
	Digest string
}

func (e *NestedIndexError) Error() string {
	return fmt.Sprintf("%s: the index holds a nested index (%s), which lockstep does not pin; pin that index by its digest instead", e.Ref, e.Digest)
}

// InvalidInput reports that this is an input error (exit 2).
func (e *NestedIndexError) InvalidInput() bool { return true }

// classify translates an error from go-containerregistry into ours: a 404
// (or MANIFEST_UNKNOWN, NAME_UNKNOWN, BLOB_UNKNOWN) becomes a
// *NotFoundError; anything else (401, 403, 5xx, a network error) an
// *verdict.UnavailableError for the registry. Context errors stay as they
// are.
func classify(ref, what, registry string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("resolving %s: %w", ref, err)
	}
	var te *transport.Error
	if errors.As(err, &te) && notFound(te) {
		return &NotFoundError{Ref: ref, What: what, Err: err}
	}
	return verdict.Unavailable("registry "+registry, fmt.Errorf("resolving %s: %w", ref, err))
}

func notFound(te *transport.Error) bool {
	for _, d := range te.Errors {
		switch d.Code {
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
			return true
		case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
			return false
		}
	}
	return te.StatusCode == http.StatusNotFound
}
