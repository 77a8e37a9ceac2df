package trusted_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
	"github.com/lockstep-dev/lockstep/verdict"
)

// clock is a settable time for the state.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newState(t *testing.T, c *clock) (*trusted.State, string) {
	dir := filepath.Join(t.TempDir(), "state")
	st, err := trusted.Open(dir, trusted.WithClock(c.now))
	if err != nil {
		t.Fatal(err)
	}
	return st, dir
}

func wantRefusal(t *testing.T, err error, kind string) *trusted.RefusalError {
	t.Helper()
	var re *trusted.RefusalError
	if !errors.As(err, &re) || re.Kind != kind {
		t.Fatalf("err = %v, want a %s refusal", err, kind)
	}
	return re
}

func TestCheckAndAccept(t *testing.T) {
	ctx := context.Background()
	c := &clock{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	st, dir := newState(t, c)
	g7, g6 := storetest.Manifest(t, "web", 7, ""), storetest.Manifest(t, "web", 6, "")
	if err := st.Check(ctx, g6); err != nil {
		t.Fatalf("Check on an empty state = %v, want nil", err)
	}
	if err := st.Accept(ctx, g7); err != nil {
		t.Fatal(err)
	}
	re := wantRefusal(t, st.Check(ctx, g6), trusted.KindRollback)
	var ge *manifest.GenerationError
	if !errors.As(re, &ge) || ge.Have != 7 || ge.Offered != 6 {
		t.Errorf("rollback refusal wraps %v, want a GenerationError have 7 offered 6", re.Err)
	}
	if err := st.Accept(ctx, g6); err == nil {
		t.Error("Accept(6) after 7 succeeded")
	}
	wantRefusal(t, st.Check(ctx, storetest.Manifest(t, "web", 7, "other")), trusted.KindRollback)
	if err := st.Check(ctx, g7); err != nil {
		t.Errorf("Check(the accepted manifest again) = %v, want nil", err)
	}
	if err := st.Check(ctx, storetest.Manifest(t, "api", 6, "")); err != nil {
		t.Errorf("another release is independent: %v", err)
	}
	// A restart reads the same state.
	again, err := trusted.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec, ok, err := again.Get("web"); err != nil || !ok || rec.Generation != 7 || rec.Digest != g7.Digest {
		t.Errorf("after reopening: %+v %v %v, want generation 7", rec, ok, err)
	}
	// A damaged record is an error, never a reset to nothing.
	if err := os.WriteFile(filepath.Join(dir, "web.state.json"), []byte(`{"release":"web","gener`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := again.Check(ctx, g6); err == nil {
		t.Error("Check with a damaged state = nil, want an error")
	}
}

func TestExpired(t *testing.T) {
	ctx := context.Background()
	c := &clock{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	st, _ := newState(t, c)
	m := storetest.Manifest(t, "web", 1, "")
	exp := c.t.Add(-time.Second)
	m.Manifest.Release.ExpiresAt = &exp
	re := wantRefusal(t, st.Check(ctx, m), trusted.KindExpired)
	if !verdict.IsMismatch(re) {
		t.Errorf("expiry refusal %v does not wrap a MismatchError (exit 1)", re)
	}
	if err := st.Accept(ctx, m); err == nil {
		t.Error("Accept(expired) succeeded")
	}
	if _, ok, _ := st.Get("web"); ok {
		t.Error("a refused manifest was recorded")
	}
}

// source is a manifest.Source that returns what it holds.
type source struct {
	m   *manifest.Signed
	err error
}

func (s *source) Fetch(context.Context) (*manifest.Signed, error) { return s.m, s.err }

func TestSourceMaxAge(t *testing.T) {
	ctx := context.Background()
	c := &clock{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	st, _ := newState(t, c)
	m := storetest.Signed(storetest.Manifest(t, "web", 3, ""))
	up := &source{m: m}
	src := &trusted.Source{Upstream: up, State: st, Release: "web"}
	got, err := src.Fetch(context.Background())
	if err != nil || got.Digest != m.Digest {
		t.Fatalf("Fetch = %v, %v", got, err)
	}
	if err := st.Accept(ctx, got); err != nil {
		t.Fatal(err)
	}
	down := verdict.Unavailable("manifest store s3://x", errors.New("connection refused"))
	up.m, up.err = nil, down
	// By default an unreachable store is a refusal.
	if _, err := src.Fetch(context.Background()); !verdict.IsUnavailable(err) {
		t.Fatalf("Fetch(store down, no --max-age) = %v, want UnavailableError", err)
	}
	src.MaxAge = time.Hour
	c.t = c.t.Add(59 * time.Minute)
	got, err = src.Fetch(context.Background())
	if err != nil || got.Digest != m.Digest || string(got.Signature) != string(m.Signature) {
		t.Fatalf("Fetch(store down, cache 59m old, --max-age 1h) = %v, %v; want the cached manifest with its signature", got, err)
	}
	accepted := c.t.Add(-59 * time.Minute)
	if !got.CachedAt.Equal(accepted) {
		t.Errorf("the cached copy's CachedAt = %s, want when it was accepted, %s", got.CachedAt, accepted)
	}
	// Admitting from the cache does not make the cache fresher.
	if err := st.Accept(ctx, got); err != nil {
		t.Fatalf("Accept(the cached copy) = %v", err)
	}
	if rec, _, _ := st.Get("web"); !rec.AcceptedAt.Equal(accepted) {
		t.Errorf("accepting the cached copy moved acceptedAt to %s, want it left at %s", rec.AcceptedAt, accepted)
	}
	c.t = c.t.Add(2 * time.Minute)
	if _, err := src.Fetch(context.Background()); !verdict.IsUnavailable(err) {
		t.Fatalf("Fetch(store down, cache 61m old) = %v, want UnavailableError", err)
	}
	// Another error than unavailability never falls back.
	up.err = &manifest.CorruptError{Location: "web/channels/production.json", Reason: "truncated"}
	c.t = c.t.Add(-30 * time.Minute)
	if _, err := src.Fetch(context.Background()); err == nil || verdict.IsUnavailable(err) {
		t.Fatalf("Fetch(corrupt store) = %v, want the corrupt error", err)
	}
}

// TestRollbackProtection: an instance that accepted generation 7 refuses
// 6 (here from a stale copy of the store); `rollback --to 6` produces
// generation 8 with 6's content, which it accepts.
func TestRollbackProtection(t *testing.T) {
	ctx := context.Background()
	c := &clock{time.Now()}
	state, _ := newState(t, c)
	live, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stale, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for g := int64(1); g <= 7; g++ {
		m := storetest.Manifest(t, "web", g, "")
		if _, err := store.Publish(ctx, live, m, "production", "ci"); err != nil {
			t.Fatal(err)
		}
		if g <= 6 {
			if _, err := store.Publish(ctx, stale, m, "production", "ci"); err != nil {
				t.Fatal(err)
			}
		}
	}
	admit := func(st manifest.Store) (*manifest.Signed, error) {
		src := &trusted.Source{Upstream: store.ChannelSource{Store: st, Release: "web", Channel: "production"}, State: state, Release: "web"}
		m, err := src.Fetch(ctx)
		if err != nil {
			return nil, err
		}
		if err := state.Check(ctx, m); err != nil {
			return nil, err
		}
		return m, state.Accept(ctx, m)
	}
	if m, err := admit(live); err != nil || m.Manifest.Release.Generation != 7 {
		t.Fatalf("admitting generation 7: %v", err)
	}
	_, err = admit(stale)
	wantRefusal(t, err, trusted.KindRollback)
	r, err := store.Rollback(ctx, live, store.RollbackOptions{Release: "web", Channel: "production", To: "6", By: "operator", AllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Pointer.Generation != 8 || r.From.Manifest.Release.Generation != 6 {
		t.Fatalf("rollback --to 6 = generation %d from %d, want 8 from 6", r.Pointer.Generation, r.From.Manifest.Release.Generation)
	}
	m, err := admit(live)
	if err != nil {
		t.Fatalf("admitting the rollback: %v", err)
	}
	if m.Manifest.Release.Generation != 8 || m.Manifest.Images[0].Digest != r.From.Manifest.Images[0].Digest || m.Manifest.Assets.Fingerprint != r.From.Manifest.Assets.Fingerprint {
		t.Errorf("admitted generation %d with images %v, want 8 with generation 6's content", m.Manifest.Release.Generation, m.Manifest.Images)
	}
	if m.Signature != nil {
		t.Error("the rollback manifest carries a signature; it cannot (the bytes are new)")
	}
	if rec, _, _ := state.Get("web"); rec.Generation != 8 {
		t.Errorf("state records %d, want 8", rec.Generation)
	}
}

func TestWritableCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir string
		ok  bool
	}{
		{dir, true},
		{filepath.Join(dir, "a", "b"), true},
		{filepath.Join(file, "state"), false},
	} {
		st, err := trusted.Open(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Writable(); (err == nil) != tc.ok {
			t.Errorf("Writable(%s) = %v, want ok %v", tc.dir, err, tc.ok)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Writable created %s: %v", filepath.Join(dir, "a"), err)
	}
}

// TestAcceptAgain: accepting the same release again moves acceptedAt and
// rewrites only what changed; a cached copy that was damaged, or whose
// signature differs, is written again, and nothing temporary is left.
func TestAcceptAgain(t *testing.T) {
	ctx := context.Background()
	c := &clock{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	st, dir := newState(t, c)
	m := storetest.Signed(storetest.Manifest(t, "web", 3, ""))
	if err := st.Accept(ctx, m); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "web.manifest.json")
	if err := os.WriteFile(copyPath, []byte(`{"damaged": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(time.Hour)
	if err := st.Accept(ctx, m); err != nil {
		t.Fatal(err)
	}
	got, at, ok, err := st.Cached("web")
	if err != nil || !ok || got.Digest != m.Digest || string(got.Signature) != string(m.Signature) || !at.Equal(c.t) {
		t.Fatalf("Cached after accepting again = %v, %s, %v, %v; want the manifest, its signature, accepted at %s", got, at, ok, err, c.t)
	}
	// The same bytes with another signature: the signature is rewritten.
	resigned := *m
	resigned.Signature = []byte("b3RoZXI=\n")
	if err := st.Accept(ctx, &resigned); err != nil {
		t.Fatal(err)
	}
	if got, _, ok, _ := st.Cached("web"); !ok || string(got.Signature) != string(resigned.Signature) {
		t.Fatalf("Cached signature = %q, want %q", got.Signature, resigned.Signature)
	}
	// Unsigned now: the old signature is removed, not kept beside it.
	unsigned := *m
	unsigned.Signature, unsigned.Bundle = nil, nil
	if err := st.Accept(ctx, &unsigned); err != nil {
		t.Fatal(err)
	}
	if got, _, ok, _ := st.Cached("web"); !ok || got.Signature != nil {
		t.Fatalf("Cached signature after an unsigned accept = %q, want none", got.Signature)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if name := e.Name(); name != ".lock" && name != "web.manifest.json" && name != "web.state.json" {
			t.Errorf("state directory holds %s, want only the lock, the copy and the record", name)
		}
	}
}
