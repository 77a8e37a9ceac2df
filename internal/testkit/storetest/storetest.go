package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// Options tune Run for a backend.
type Options struct {
	// Publishers is the number of concurrent publishers in the concurrency
	// test (default 50).
	Publishers int
}

// Run runs the contract against stores from newStore, a fresh, empty store
// for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) manifest.Store, opts ...Options) {
	o := Options{Publishers: 50}
	for _, x := range opts {
		if x.Publishers > 0 {
			o.Publishers = x.Publishers
		}
	}
	t.Run("PutGet", func(t *testing.T) { testPutGet(t, newStore(t)) })
	t.Run("PutNeverRewrites", func(t *testing.T) { testPutNeverRewrites(t, newStore(t)) })
	t.Run("ConcurrentPutsOfOneDigest", func(t *testing.T) { testPutRace(t, newStore(t)) })
	t.Run("Missing", func(t *testing.T) { testMissing(t, newStore(t)) })
	t.Run("GenerationRule", func(t *testing.T) { testGenerationRule(t, newStore(t)) })
	t.Run("MoveNeedsStoredManifest", func(t *testing.T) { testMoveUnstored(t, newStore(t)) })
	t.Run("ListChannelsDelete", func(t *testing.T) { testListDelete(t, newStore(t)) })
	t.Run("StalePublisher", func(t *testing.T) { testStalePublisher(t, newStore(t)) })
	t.Run("ConcurrentPublishersAndGC", func(t *testing.T) { testConcurrent(t, newStore(t), o.Publishers) })
}

func mustPut(t *testing.T, st manifest.Store, s *manifest.Signed) {
	t.Helper()
	if err := st.Put(context.Background(), s); err != nil {
		t.Fatalf("Put(%s): %v", s.Manifest.ID(), err)
	}
}

func mustPublish(t *testing.T, st manifest.Store, s *manifest.Signed, channel string) *manifest.Pointer {
	t.Helper()
	p, err := store.Publish(context.Background(), st, s, channel, "storetest")
	if err != nil {
		t.Fatalf("Publish(%s): %v", s.Manifest.ID(), err)
	}
	return p
}

func testPutGet(t *testing.T, st manifest.Store) {
	ctx := context.Background()
	s := Signed(Manifest(t, "web", 1, ""))
	mustPut(t, st, s)
	got, err := st.Get(ctx, "web", s.Digest)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(got.Raw, s.Raw) {
		t.Errorf("Get returned other bytes than Put stored:\n%s\nwant\n%s", got.Raw, s.Raw)
	}
	if got.Digest != s.Digest || got.Manifest.Release.Generation != 1 {
		t.Errorf("Get = %s generation %d, want %s generation 1", got.Digest, got.Manifest.Release.Generation, s.Digest)
	}
	if !bytes.Equal(got.Signature, s.Signature) || !bytes.Equal(got.Bundle, s.Bundle) {
		t.Errorf("Get signature %q bundle %q, want %q and %q", got.Signature, got.Bundle, s.Signature, s.Bundle)
	}
	if got.Location == "" {
		t.Error("Get left Location empty")
	}
	unsigned := Manifest(t, "web", 2, "")
	mustPut(t, st, unsigned)
	got, err = st.Get(ctx, "web", unsigned.Digest)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Signature != nil || got.Bundle != nil {
		t.Errorf("unsigned manifest came back with signature %q bundle %q", got.Signature, got.Bundle)
	}
}

func testPutNeverRewrites(t *testing.T, st manifest.Store) {
	ctx := context.Background()
	s := Manifest(t, "web", 1, "")
	mustPut(t, st, s)
	// The same manifest in its canonical encoding: same digest, other bytes.
	canon, err := s.Manifest.Encode()
	if err != nil {
		t.Fatal(err)
	}
	other, err := manifest.NewSigned(canon, "canonical")
	if err != nil {
		t.Fatal(err)
	}
	if other.Digest != s.Digest || bytes.Equal(other.Raw, s.Raw) {
		t.Fatal("fixture: want the same digest with other bytes")
	}
	mustPut(t, st, Signed(other))
	got, err := st.Get(ctx, "web", s.Digest)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(got.Raw, s.Raw) {
		t.Errorf("a second Put of the same digest rewrote the stored bytes")
	}
	if got.Signature != nil {
		t.Errorf("a signature over other bytes was attached to the stored manifest: %q", got.Signature)
	}
	// The same bytes again, now signed: the missing signature is added.
	mustPut(t, st, Signed(s))
	got, err = st.Get(ctx, "web", s.Digest)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(got.Signature, Signed(s).Signature) {
		t.Errorf("signature after re-Put of the same bytes = %q, want it added", got.Signature)
	}
}

// testPutRace: publishers store one manifest at once, formatted two ways,
// each signing its own bytes. One set of bytes wins, and the signature
// stored beside it is the one over those bytes.
func testPutRace(t *testing.T, st manifest.Store) {
	ctx := context.Background()
	indented := Manifest(t, "web", 1, "")
	canon, err := indented.Manifest.Encode()
	if err != nil {
		t.Fatal(err)
	}
	compact, err := manifest.NewSigned(canon, "canonical")
	if err != nil {
		t.Fatal(err)
	}
	sigFor := map[string][]byte{}
	var versions []*manifest.Signed
	for i, v := range []*manifest.Signed{indented, compact} {
		s := *v
		s.Signature = []byte(fmt.Sprintf("signature-over-version-%d", i))
		sigFor[string(s.Raw)] = s.Signature
		versions = append(versions, &s)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := st.Put(ctx, versions[i%2]); err != nil {
				t.Errorf("Put: %v", err)
			}
		}()
	}
	wg.Wait()
	got, err := st.Get(ctx, "web", indented.Digest)
	if err != nil {
		t.Fatal(err)
	}
	want, ok := sigFor[string(got.Raw)]
	if !ok || !bytes.Equal(got.Signature, want) {
		t.Errorf("stored bytes carry signature %q, want %q (the one over them)", got.Signature, want)
	}
}

func testMissing(t *testing.T, st manifest.Store) {
	ctx := context.Background()
	d := Manifest(t, "web", 1, "").Digest
	if _, err := st.Get(ctx, "web", d); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("Get(missing) = %v, want ErrNotFound", err)
	}
	if _, err := st.Channel(ctx, "web", "production"); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("Channel(missing) = %v, want ErrNotFound", err)
	}
	if ds, err := st.List(ctx, "web"); err != nil || len(ds) != 0 {
		t.Errorf("List(empty release) = %v, %v; want nothing", ds, err)
	}
	if cs, err := st.Channels(ctx, "web"); err != nil || len(cs) != 0 {
		t.Errorf("Channels(empty release) = %v, %v; want nothing", cs, err)
	}
	if err := st.Delete(ctx, "web", d); err != nil {
		t.Errorf("Delete(missing) = %v, want nil", err)
	}
	for _, bad := range []string{"../etc", "Web", "", "a/b"} {
		if _, err := st.Channel(ctx, bad, "production"); err == nil || errors.Is(err, manifest.ErrNotFound) {
			t.Errorf("Channel(release %q) = %v, want a name error", bad, err)
		}
		if _, err := st.Channel(ctx, "web", bad); err == nil || errors.Is(err, manifest.ErrNotFound) {
			t.Errorf("Channel(channel %q) = %v, want a name error", bad, err)
		}
	}
}

func testGenerationRule(t *testing.T, st manifest.Store) {
	ctx := context.Background()
	g1, g3 := Manifest(t, "web", 1, ""), Manifest(t, "web", 3, "")
	mustPublish(t, st, g1, "production")
	p := mustPublish(t, st, g3, "production")
	if p.Generation != 3 || p.Digest != g3.Digest || len(p.History) != 1 || p.History[0].Generation != 1 {
		t.Errorf("pointer after 1, 3 = %+v, want generation 3 with generation 1 in its history", p)
	}
	for _, tc := range []struct {
		name string
		s    *manifest.Signed
	}{
		{"lower", Manifest(t, "web", 2, "")},
		{"equal, other content", Manifest(t, "web", 3, "other")},
		{"equal, same manifest", g3},
		{"first", g1},
	} {
		mustPut(t, st, tc.s)
		_, err := st.Move(ctx, "production", tc.s, "storetest")
		var ge *manifest.GenerationError
		if !errors.As(err, &ge) {
			t.Errorf("%s: Move(generation %d) = %v, want a *GenerationError", tc.name, tc.s.Manifest.Release.Generation, err)
			continue
		}
		if ge.Have != 3 || ge.Offered != tc.s.Manifest.Release.Generation || ge.Release != "web" || ge.Channel != "production" {
			t.Errorf("%s: GenerationError = %+v, want have 3, offered %d", tc.name, ge, tc.s.Manifest.Release.Generation)
		}
	}
	got, err := st.Channel(ctx, "web", "production")
	if err != nil {
		t.Fatal(err)
	}
	if got.Generation != 3 || got.Digest != g3.Digest {
		t.Errorf("after refusals the channel names generation %d %s, want 3 %s", got.Generation, got.Digest, g3.Digest)
	}
	// Publish refuses a new channel below the release's floor (gc may
	// already have taken what lies below it)...
	var ge *manifest.GenerationError
	if _, err := store.Publish(ctx, st, g1, "staging", "storetest"); !errors.As(err, &ge) || ge.Floor != "production" {
		t.Errorf("Publish(generation 1) to a new channel below production's 3 = %v, want a *GenerationError naming the floor", err)
	}
	if _, err := st.Channel(ctx, "web", "staging"); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("a refused new channel exists: %v", err)
	}
	// ...but the store itself keeps channels independent: Move starts a
	// new channel at any generation.
	if p, err := st.Move(ctx, "staging", g1, "storetest"); err != nil || p.Generation != 1 {
		t.Errorf("Move(generation 1) to new channel staging = %+v, %v; want generation 1", p, err)
	}
	if n, err := store.NextGeneration(ctx, st, "web", "staging"); err != nil || n != 4 {
		t.Errorf("NextGeneration = %d, %v; want 4 (the highest channel + 1)", n, err)
	}
	if n, err := store.NextGeneration(ctx, st, "other", "production"); err != nil || n != 1 {
		t.Errorf("NextGeneration(new release) = %d, %v; want 1", n, err)
	}
	// History is bounded.
	for g := int64(4); g < 4+manifest.MaxHistory+3; g++ {
		mustPublish(t, st, Manifest(t, "web", g, ""), "production")
	}
	got, err = st.Channel(ctx, "web", "production")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.History) != manifest.MaxHistory || got.History[0].Generation != got.Generation-1 {
		t.Errorf("history has %d entries starting at %d, want %d starting at %d", len(got.History), got.History[0].Generation, manifest.MaxHistory, got.Generation-1)
	}
}

func testMoveUnstored(t *testing.T, st manifest.Store) {
	ctx := context.Background()
	s := Manifest(t, "web", 1, "")
	if _, err := st.Move(ctx, "production", s, "storetest"); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("Move(unstored manifest) = %v, want ErrNotFound", err)
	}
	if _, err := st.Channel(ctx, "web", "production"); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("the refused Move created the channel: %v", err)
	}
}

func testListDelete(t *testing.T, st manifest.Store) {
	ctx := context.Background()
	if rs, err := st.Releases(ctx); err != nil || len(rs) != 0 {
		t.Errorf("Releases of an empty store = %v, %v; want none", rs, err)
	}
	a, b := Signed(Manifest(t, "web", 1, "")), Manifest(t, "web", 2, "")
	other := Manifest(t, "api", 1, "")
	mustPut(t, st, a)
	mustPut(t, st, b)
	mustPublish(t, st, other, "canary")
	ds, err := st.List(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	want := map[manifest.Digest]bool{a.Digest: true, b.Digest: true}
	if len(ds) != 2 || !want[ds[0]] || !want[ds[1]] || ds[0].String() > ds[1].String() {
		t.Errorf("List(web) = %v, want %s and %s, sorted", ds, a.Digest, b.Digest)
	}
	if rs, err := st.Releases(ctx); err != nil || len(rs) != 2 || rs[0] != "api" || rs[1] != "web" {
		t.Errorf("Releases = %v, %v; want [api web]", rs, err)
	}
	if cs, _ := st.Channels(ctx, "api"); len(cs) != 1 || cs[0] != "canary" {
		t.Errorf("Channels(api) = %v, want [canary]", cs)
	}
	if cs, _ := st.Channels(ctx, "web"); len(cs) != 0 {
		t.Errorf("Channels(web) = %v, want none", cs)
	}
	if err := st.Delete(ctx, "web", a.Digest); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := st.Get(ctx, "web", a.Digest); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	// Put again after delete: stored fresh, without the old signature.
	mustPut(t, st, Manifest(t, "web", 1, ""))
	if got, err := st.Get(ctx, "web", a.Digest); err != nil || got.Signature != nil {
		t.Errorf("re-Put after Delete: %v, signature %q (want none: Delete takes the signature too)", err, got.Signature)
	}
	if ds, _ := st.List(ctx, "api"); len(ds) != 1 || ds[0] != other.Digest {
		t.Errorf("List(api) = %v, want only %s", ds, other.Digest)
	}
}

// testStalePublisher: a publisher reads the channel and takes the next
// generation, stalls while five newer generations are published, then
// writes: refused, and the channel still names the newest.
func testStalePublisher(t *testing.T, st manifest.Store) {
	ctx := context.Background()
	mustPublish(t, st, Manifest(t, "web", 1, ""), "production")
	next, err := store.NextGeneration(ctx, st, "web", "production")
	if err != nil || next != 2 {
		t.Fatalf("NextGeneration = %d, %v; want 2", next, err)
	}
	stale := Manifest(t, "web", next, "stale")
	mustPut(t, st, stale)
	var newest *manifest.Signed
	for g := int64(2); g <= 6; g++ {
		newest = Manifest(t, "web", g, "fresh")
		mustPublish(t, st, newest, "production")
	}
	_, err = store.Publish(ctx, st, stale, "production", "stale")
	var ge *manifest.GenerationError
	if !errors.As(err, &ge) || ge.Have != 6 || ge.Offered != 2 {
		t.Fatalf("stale Publish = %v, want a GenerationError (have 6, offered 2)", err)
	}
	p, err := st.Channel(ctx, "web", "production")
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != 6 || p.Digest != newest.Digest {
		t.Errorf("channel names generation %d %s, want the newest, 6 %s", p.Generation, p.Digest, newest.Digest)
	}
}
