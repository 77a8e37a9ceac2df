package record

import (
	"context"
	"errors"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// previousFunc is a PreviousSource that counts its calls.
type previousFunc struct {
	calls *int
	fn    func() (*manifest.Signed, error)
}

func (p previousFunc) Previous(context.Context) (*manifest.Signed, error) {
	*p.calls++
	return p.fn()
}

// TestPreviousFrom: the previous manifest found through PreviousFrom (the
// store's channel, for `record --previous store`) refuses a tag moved
// since, as Previous does; none there compares nothing; a lookup that
// fails fails the record before any image is pinned; Previous, when set,
// is used without asking PreviousFrom.
func TestPreviousFrom(t *testing.T) {
	host := testRegistry(t)
	ref := host + "/store/web:v1"
	pushImage(t, ref)
	opts := func(p PreviousSource) Options {
		return Options{Release: "store-web", Generation: 2, Images: []Image{{Name: "web", Ref: ref}}, PreviousFrom: p}
	}
	first, err := Manifest(context.Background(), opts(nil))
	if err != nil {
		t.Fatal(err)
	}
	pushImage(t, ref) // the tag moves: new bytes under v1
	signed := &manifest.Signed{Manifest: first}

	var calls int
	_, err = Manifest(context.Background(), opts(previousFunc{&calls, func() (*manifest.Signed, error) { return signed, nil }}))
	var moved *registry.MovedTagError
	if !errors.As(err, &moved) || len(moved.Tags) != 1 || moved.Tags[0].Name != "web" || calls != 1 {
		t.Errorf("a tag moved since the previous release from PreviousFrom: %v (%d calls), want a *registry.MovedTagError naming web, one call", err, calls)
	}

	calls = 0
	if m, err := Manifest(context.Background(), opts(previousFunc{&calls, func() (*manifest.Signed, error) { return nil, nil }})); err != nil || m == nil || calls != 1 {
		t.Errorf("no previous release: %v (%d calls), want a manifest, nothing compared", err, calls)
	}

	calls = 0
	down := errors.New("the store is down")
	o := opts(previousFunc{&calls, func() (*manifest.Signed, error) { return nil, down }})
	o.Images = []Image{{Name: "web", Ref: "127.0.0.1:1/never/pinned:v1"}}
	if _, err := Manifest(context.Background(), o); !errors.Is(err, down) {
		t.Errorf("a lookup that fails: %v, want its error (before pinning, so not the registry's)", err)
	}

	calls = 0
	o = opts(previousFunc{&calls, func() (*manifest.Signed, error) { return nil, down }})
	o.Previous = first
	if _, err := Manifest(context.Background(), o); !errors.As(err, &moved) || calls != 0 {
		t.Errorf("Previous set: %v (%d calls to PreviousFrom), want the moved tag refused from Previous, PreviousFrom not asked", err, calls)
	}
}
