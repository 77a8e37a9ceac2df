package manifest

import (
	"context"
	"fmt"
)

// WrongReleaseError refuses a manifest of another release than the one
// the consumer asked for. It is a refusal (exit 1), never an input error:
// the document may be perfectly valid, and signed, for its own release.
type WrongReleaseError struct {
	// Location is where the manifest came from.
	Location string
	// Got is the release the manifest names; Want the one asked for.
	Got, Want string
}

func (e *WrongReleaseError) Error() string {
	return fmt.Sprintf("manifest-wrong-release: %s is a manifest of release %q, not of %q", e.Location, e.Got, e.Want)
}

// CheckRelease is the one binding rule: s is accepted only as a manifest
// of release. An empty release binds nothing and is refused too, so that a
// consumer that forgot to say what it follows never accepts any release.
func CheckRelease(s *Signed, release string) error {
	if s == nil || s.Manifest == nil {
		return fmt.Errorf("no manifest to bind to release %q", release)
	}
	if release == "" || s.Manifest.Release.Name != release {
		return &WrongReleaseError{Location: s.Location, Got: s.Manifest.Release.Name, Want: release}
	}
	return nil
}

// Bound is a Source whose every manifest must be of Release
// (CheckRelease): the binding of a consumer that names the release it
// follows. A manifest of another release is a *WrongReleaseError.
type Bound struct {
	Source  Source
	Release string
}

var _ Source = Bound{}

// Fetch returns Source's manifest when it is of Release.
func (b Bound) Fetch(ctx context.Context) (*Signed, error) {
	s, err := b.Source.Fetch(ctx)
	if err != nil {
		return nil, err
	}
	if err := CheckRelease(s, b.Release); err != nil {
		return nil, err
	}
	return s, nil
}
