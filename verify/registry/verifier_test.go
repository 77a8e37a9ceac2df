package registry

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// verifierFunc is a func-typed Verifier.
type verifierFunc func(context.Context, []manifest.Image) error

func (f verifierFunc) Verify(ctx context.Context, ims []manifest.Image) error { return f(ctx, ims) }

// TestResolveVerifier: every pinned image goes to the Verifier, once; a
// refusal comes back with the complete Result, in Refusals and in the
// error; a could-not-verify fails the run.
func TestResolveVerifier(t *testing.T) {
	host := memRegistry(t)
	pushImage(t, host+"/app:v1", "linux", "amd64")
	pushImage(t, host+"/bad:v1", "linux", "amd64")
	reqs := []Request{{Name: "app", Ref: host + "/app:v1"}, {Name: "bad", Ref: host + "/bad:v1"}}
	var mu sync.Mutex
	seen := map[string]manifest.Digest{}
	refusal := &verdict.MismatchError{Subject: "image bad", Got: "unsigned", Want: "signed"}
	opt := fastOptions()
	opt.Verifier = verifierFunc(func(_ context.Context, ims []manifest.Image) error {
		if len(ims) != 1 {
			t.Errorf("Verify got %d images, want one at a time", len(ims))
		}
		mu.Lock()
		defer mu.Unlock()
		seen[ims[0].Name] = ims[0].Digest
		if ims[0].Name == "bad" {
			return refusal
		}
		return nil
	})
	res, err := Resolve(context.Background(), reqs, opt)
	if !errors.Is(err, refusal) || !verdict.IsMismatch(err) {
		t.Fatalf("Resolve = %v, want the verifier's refusal", err)
	}
	if res == nil || len(res.Images) != 2 || len(res.Refusals) != 2 || res.Refusals[0] != nil || res.Refusals[1] != refusal {
		t.Fatalf("Resolve = %+v, want both images and the refusal of bad only", res)
	}
	for i, im := range res.Images {
		if seen[im.Name] != im.Digest {
			t.Errorf("image %d (%s): the verifier saw digest %v, want the pinned %v", i, im.Name, seen[im.Name], im.Digest)
		}
	}

	opt.Verifier = verifierFunc(func(context.Context, []manifest.Image) error {
		return verdict.Unavailable("registry "+host, errors.New("down"))
	})
	if res, err := Resolve(context.Background(), reqs, opt); res != nil || !verdict.IsUnavailable(err) {
		t.Errorf("Resolve with an unreachable verifier = %+v, %v; want no result, unavailable", res, err)
	}

	opt.Verifier = nil
	if res, err := Resolve(context.Background(), reqs, opt); err != nil || res.Refusals != nil {
		t.Errorf("Resolve without a verifier = %+v, %v; want no refusals", res, err)
	}
}
