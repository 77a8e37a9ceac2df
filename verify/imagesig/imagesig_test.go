package imagesig_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

func keyVerifier(t testing.TB, key sigsig.Verifier, p imagesig.Policy, cache *imagesig.Cache) *imagesig.Verifier {
	t.Helper()
	v, err := imagesig.New(imagesig.Options{Trust: signature.Options{Key: key}, Policy: p, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type outcome int

const (
	accepted outcome = iota
	refused
	unsigned
	unavailable
)

func (o outcome) String() string {
	return [...]string{"accepted", "refused", "unsigned", "unavailable"}[o]
}

func classify(err error) outcome {
	switch {
	case err == nil:
		return accepted
	case signature.IsUnsigned(err) && verdict.IsMismatch(err):
		return unsigned
	case verdict.IsMismatch(err):
		return refused
	}
	return unavailable
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key, other := sigtest.Key(t), sigtest.Key(t)
	signedD := reg.PushImage(t, "app/web", "signed")
	unsignedD := reg.PushImage(t, "app/web", "unsigned")
	otherD := reg.PushImage(t, "app/web", "other-key")
	movedD := reg.PushImage(t, "app/web", "moved")
	sigtest.SignImage(t, signedD, key, nil, nil, nil)
	sigtest.SignImage(t, otherD, other, nil, nil, nil)
	// A valid signature of signedD copied onto movedD's signature tag.
	sigtest.SignImage(t, movedD, key, nil, nil, &signedD)

	v := keyVerifier(t, key, imagesig.Policy{}, nil)
	for _, tc := range []struct {
		name string
		d    name.Digest
		want outcome
		say  string
	}{
		{"signed with the key", signedD, accepted, ""},
		{"unsigned", unsignedD, unsigned, "unsigned"},
		{"signed with another key", otherD, refused, "no signature verifies"},
		{"a signature of another digest", movedD, refused, "no signature verifies"},
	} {
		err := v.Verify(ctx, []manifest.Image{sigtest.Pin(t, "web", tc.d)})
		if got := classify(err); got != tc.want || (err != nil && !strings.Contains(err.Error(), tc.say)) {
			t.Errorf("%s: Verify = %v (%s), want %s saying %q", tc.name, err, got, tc.want, tc.say)
		}
	}

	// Two signatures, one by another key: the one that verifies counts.
	sigtest.SignImage(t, otherD, key, nil, nil, nil)
	if err := v.Verify(ctx, []manifest.Image{sigtest.Pin(t, "web", otherD)}); err != nil {
		t.Errorf("Verify(two signatures, one good) = %v", err)
	}

	// A registry that is not there is could-not-verify, not a refusal.
	im := sigtest.Pin(t, "web", signedD)
	reg.Server.Close()
	if err := v.Verify(ctx, []manifest.Image{im}); classify(err) != unavailable {
		t.Errorf("Verify(registry down) = %v, want an *verdict.UnavailableError", err)
	}
}

// TestIndexPolicy: a signed index with an unsigned platform manifest is
// refused under the default policy (cosign#786).
func TestIndexPolicy(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key := sigtest.Key(t)
	idx, plats := reg.PushIndex(t, "app/multi", "v1")
	sigtest.SignImage(t, idx, key, nil, nil, nil)
	sigtest.SignImage(t, plats["linux/amd64"], key, nil, nil, nil)
	im := sigtest.Pin(t, "web", idx)
	if len(im.Platforms) != 2 {
		t.Fatalf("pinned %d platforms, want 2", len(im.Platforms))
	}
	for _, tc := range []struct {
		name string
		p    imagesig.Policy
		want outcome
		say  string
	}{
		{"default: every platform", imagesig.Policy{}, unsigned, "linux/arm64"},
		{"all", imagesig.Policy{Index: imagesig.IndexAndPlatforms}, unsigned, "linux/arm64"},
		{"index only", imagesig.Policy{Index: imagesig.IndexOnly}, accepted, ""},
		{"the platforms the release runs", imagesig.Policy{Platforms: []string{"linux/amd64"}}, accepted, ""},
		{"a platform the image lacks", imagesig.Policy{Platforms: []string{"windows/amd64"}}, refused, "none of the image's"},
	} {
		err := keyVerifier(t, key, tc.p, nil).Verify(ctx, []manifest.Image{im})
		if got := classify(err); got != tc.want || (err != nil && !strings.Contains(err.Error(), tc.say)) {
			t.Errorf("%s: Verify = %v (%s), want %s saying %q", tc.name, err, got, tc.want, tc.say)
		}
	}
	sigtest.SignImage(t, plats["linux/arm64"], key, nil, nil, nil)
	if err := keyVerifier(t, key, imagesig.Policy{}, nil).Verify(ctx, []manifest.Image{im}); err != nil {
		t.Errorf("Verify(every platform signed) = %v", err)
	}
	if _, err := imagesig.ParseIndexPolicy("some"); err == nil {
		t.Error(`ParseIndexPolicy("some") = nil error`)
	}
}

// TestCache: a warm cache answers without the registry; it is keyed by
// digest and trust settings, so a moved tag or another key gets no free
// pass.
func TestCache(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key := sigtest.Key(t)
	d := reg.PushImage(t, "app/web", "v1")
	sigtest.SignImage(t, d, key, nil, nil, nil)
	im := sigtest.Pin(t, "web", d)
	dir := t.TempDir()
	cache, err := imagesig.NewCache(imagesig.CacheOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	v := keyVerifier(t, key, imagesig.Policy{}, cache)
	before := reg.Requests()
	if err := v.Verify(ctx, []manifest.Image{im}); err != nil {
		t.Fatal(err)
	}
	// Cold: the registry's ping, the signature image's manifest, its one
	// layer; each read once.
	if n := reg.Requests() - before; n > 3 {
		t.Errorf("cold Verify of one digest sent %d requests, want at most 3", n)
	}
	before = reg.Requests()
	if err := v.Verify(ctx, []manifest.Image{im}); err != nil {
		t.Fatal(err)
	}
	if n := reg.Requests() - before; n != 0 {
		t.Errorf("warm Verify sent %d requests, want 0", n)
	}

	// The tag moves to an unsigned image: the manifest's digest is still
	// verified (from the cache), the new digest is not.
	moved := reg.PushImage(t, "app/web", "v1")
	if err := v.Verify(ctx, []manifest.Image{sigtest.Pin(t, "web", moved)}); classify(err) != unsigned {
		t.Errorf("Verify(the tag's new digest) = %v, want unsigned", err)
	}

	// Another key does not inherit the cached result.
	if err := keyVerifier(t, sigtest.Key(t), imagesig.Policy{}, cache).Verify(ctx, []manifest.Image{im}); classify(err) != refused {
		t.Errorf("Verify(another key, warm cache) = %v, want a refusal", err)
	}

	// A new process with the same directory starts warm.
	cache2, err := imagesig.NewCache(imagesig.CacheOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	before = reg.Requests()
	if err := keyVerifier(t, key, imagesig.Policy{}, cache2).Verify(ctx, []manifest.Image{im}); err != nil {
		t.Fatal(err)
	}
	if n := reg.Requests() - before; n != 0 {
		t.Errorf("Verify with the disk cache sent %d requests, want 0", n)
	}
}

func TestCacheBound(t *testing.T) {
	dir := t.TempDir()
	c, err := imagesig.NewCache(imagesig.CacheOptions{MaxEntries: 2, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := c.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 2 || c.Has("a") || !c.Has("b") || !c.Has("c") {
		t.Errorf("after adding a, b, c to a cache of 2: len %d, has a=%v b=%v c=%v; want 2, false, true, true", c.Len(), c.Has("a"), c.Has("b"), c.Has("c"))
	}
	c.Has("b") // b is now the most recent
	c.Add("d")
	if c.Has("c") || !c.Has("b") {
		t.Errorf("least recently used c should be out, b in: has c=%v b=%v", c.Has("c"), c.Has("b"))
	}
	c2, err := imagesig.NewCache(imagesig.CacheOptions{MaxEntries: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Len() != 1 {
		t.Errorf("reloaded cache of 1 holds %d entries", c2.Len())
	}
}

func TestBadTrust(t *testing.T) {
	if _, err := imagesig.New(imagesig.Options{}); err == nil {
		t.Error("New without a key or identity = nil error")
	}
	if _, err := imagesig.New(imagesig.Options{Trust: signature.Options{Key: sigtest.Key(t)}, Policy: imagesig.Policy{Index: "x"}}); err == nil {
		t.Error("New with policy x = nil error")
	}
}

func TestErrorsJoinRefusalsFirst(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key := sigtest.Key(t)
	good := reg.PushImage(t, "app/a", "v1")
	bad := reg.PushImage(t, "app/b", "v1")
	sigtest.SignImage(t, good, key, nil, nil, nil)
	err := keyVerifier(t, key, imagesig.Policy{}, nil).Verify(ctx, []manifest.Image{sigtest.Pin(t, "a", good), sigtest.Pin(t, "b", bad)})
	var se *signature.Error
	if !errors.As(err, &se) || !strings.Contains(se.Subject, "image b") {
		t.Errorf("Verify(a signed, b not) = %v, want a refusal of image b", err)
	}
}

// TestConcurrentVerify shares one verifier and a small cache (evicting)
// between goroutines; run with -race.
func TestConcurrentVerify(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key := sigtest.Key(t)
	var images []manifest.Image
	for i := 0; i < 3; i++ {
		d := reg.PushImage(t, "app/c", "v"+string(rune('0'+i)))
		sigtest.SignImage(t, d, key, nil, nil, nil)
		images = append(images, sigtest.Pin(t, "c", d))
	}
	cache, err := imagesig.NewCache(imagesig.CacheOptions{MaxEntries: 2, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	v := keyVerifier(t, key, imagesig.Policy{}, cache)
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func(g int) {
			var err error
			for i := 0; i < 10 && err == nil; i++ {
				err = v.Verify(ctx, images[(g+i)%3:(g+i)%3+1])
			}
			errs <- err
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if cache.Len() > 2 {
		t.Errorf("cache holds %d entries, bound 2", cache.Len())
	}
}
