package manifest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

type fixedSource struct{ s *manifest.Signed }

func (f fixedSource) Fetch(context.Context) (*manifest.Signed, error) { return f.s, nil }

func TestBound(t *testing.T) {
	s := &manifest.Signed{Manifest: &manifest.Manifest{Release: manifest.Release{Name: "store-web", Generation: 3}}, Location: "release.json"}
	for _, tt := range []struct {
		release string
		ok      bool
	}{
		{"store-web", true},
		{"store-api", false},
		{"Store-Web", false},
		{"store-web ", false},
		{"", false},
	} {
		got, err := manifest.Bound{Source: fixedSource{s}, Release: tt.release}.Fetch(context.Background())
		var wr *manifest.WrongReleaseError
		switch {
		case tt.ok && (err != nil || got != s):
			t.Errorf("Bound(%q).Fetch = %v, %v; want the manifest", tt.release, got, err)
		case !tt.ok && (!errors.As(err, &wr) || wr.Got != "store-web" || wr.Want != tt.release || got != nil):
			t.Errorf("Bound(%q).Fetch = %v, %v; want a *WrongReleaseError", tt.release, got, err)
		}
	}
}
