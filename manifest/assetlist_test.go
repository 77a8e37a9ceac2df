package manifest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

func TestFetchAssetList(t *testing.T) {
	ctx := context.Background()
	file := manifest.FileSource{Path: "testdata/assets-only.json"}
	for _, tc := range []struct {
		name  string
		src   manifest.Source
		files int
		err   any
	}{
		{"a file", file, 3, nil},
		{"a file bound to its release", manifest.Bound{Source: file, Release: "store-web"}, 3, nil},
		{"a file bound to another release", manifest.Bound{Source: file, Release: "store-api"}, 0, new(*manifest.WrongReleaseError)},
		{"a file that does not exist", manifest.FileSource{Path: "testdata/nowhere.json"}, 0, nil},
	} {
		m, loc, err := manifest.FetchAssetList(ctx, tc.src)
		switch {
		case tc.name == "a file that does not exist":
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
		case tc.err != nil:
			if !errors.As(err, tc.err) {
				t.Errorf("%s: error %v, want %T", tc.name, err, tc.err)
			}
		case err != nil || len(m.Assets.Files) != tc.files || loc != file.Path:
			t.Errorf("%s: %d files at %q, %v; want %d at %s", tc.name, len(m.Assets.Files), loc, err, tc.files, file.Path)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := manifest.FetchAssetList(ctx, file); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
}
