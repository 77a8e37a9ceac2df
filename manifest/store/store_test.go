package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/verdict"
)

func newStore(t *testing.T) *filestore.Store {
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func publish(t *testing.T, st manifest.Store, channel string, gens ...int64) []*manifest.Signed {
	t.Helper()
	var out []*manifest.Signed
	for _, g := range gens {
		m := storetest.Manifest(t, "web", g, "")
		if _, err := store.Publish(context.Background(), st, m, channel, "test"); err != nil {
			t.Fatalf("publishing %d: %v", g, err)
		}
		out = append(out, m)
	}
	return out
}

func digests(es []store.GCEntry) map[int64]string {
	out := map[int64]string{}
	for _, e := range es {
		out[e.Generation] = e.Reason
	}
	return out
}

func TestGCRules(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	// Both channels start together; production runs ahead to 8 while
	// staging stops at 3.
	ms := publish(t, st, "production", 1)
	publish(t, st, "staging", 1)
	ms = append(ms, publish(t, st, "production", 2, 3, 4, 5, 6, 7, 8)...)
	publish(t, st, "staging", 3)
	// 9 stored, never moved (a refused or unfinished publish).
	if err := st.Put(ctx, storetest.Manifest(t, "web", 9, "")); err != nil {
		t.Fatal(err)
	}
	inUse := []manifest.Digest{ms[0].Digest} // generation 1 still runs somewhere
	dry, err := store.GC(ctx, st, "web", store.GCOptions{Keep: 2, InUse: inUse})
	if err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun {
		t.Error("GC without Delete is not a dry run")
	}
	if ds, _ := st.List(ctx, "web"); len(ds) != 9 {
		t.Fatalf("a dry run deleted: %d manifests left, want 9", len(ds))
	}
	got := digests(dry.Deleted)
	if len(got) != 1 || got[2] != "" {
		t.Errorf("dry run would delete %v, want only generation 2 (below staging's 3, not newest, not in use)", dry.Deleted)
	}
	kept := digests(dry.Kept)
	for g, want := range map[int64]string{1: store.KeptInUse, 3: store.KeptLive, 4: store.KeptRisable, 8: store.KeptLive, 9: store.KeptNewest} {
		if kept[g] != want {
			t.Errorf("generation %d kept for %q, want %q", g, kept[g], want)
		}
	}
	rep, err := store.GC(ctx, st, "web", store.GCOptions{Keep: 2, InUse: inUse, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 1 || rep.Deleted[0].Generation != 2 {
		t.Errorf("deleted %v, want generation 2", rep.Deleted)
	}
	if _, err := st.Get(ctx, "web", ms[1].Digest); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("generation 2 still there: %v", err)
	}
	// Staging moves on: now everything below 8 that is not kept may go.
	publish(t, st, "staging", 8)
	rep, err = store.GC(ctx, st, "web", store.GCOptions{Keep: 2, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 6 {
		t.Errorf("deleted %v, want generations 1 and 3 to 7", rep.Deleted)
	}
	ds, _ := st.List(ctx, "web")
	if len(ds) != 2 {
		t.Errorf("%d manifests left, want 8 (live, newest) and 9 (newest)", len(ds))
	}
}

// TestNewChannelFloor: a channel that does not exist yet cannot start
// below the lowest generation the release's channels name, since gc may
// already have deleted what lies below it; nothing is written when it is
// refused. At the floor, or above it, it may.
func TestNewChannelFloor(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	publish(t, st, "production", 5, 6)
	publish(t, st, "staging", 6, 7)
	before, _ := st.List(ctx, "web")
	for _, tc := range []struct {
		gen  int64
		want bool
	}{{1, false}, {5, false}, {6, true}, {9, true}} {
		m := storetest.Manifest(t, "web", tc.gen, "canary")
		_, err := store.Publish(ctx, st, m, fmt.Sprintf("canary-%d", tc.gen), "test")
		var ge *manifest.GenerationError
		switch {
		case tc.want && err != nil:
			t.Errorf("generation %d on a new channel, at or above the floor 6: %v", tc.gen, err)
		case !tc.want && !errors.As(err, &ge):
			t.Errorf("generation %d on a new channel below the floor 6: %v, want a *GenerationError", tc.gen, err)
		case !tc.want:
			if ge.Floor != "production" || ge.Have != 6 || !strings.Contains(err.Error(), "gc may already have deleted") {
				t.Errorf("generation %d: %+v (%v), want the floor of channel production, generation 6", tc.gen, ge, err)
			}
			if _, err := st.Get(ctx, "web", m.Digest); !errors.Is(err, manifest.ErrNotFound) {
				t.Errorf("generation %d was stored although it was refused: %v", tc.gen, err)
			}
		}
	}
	if after, _ := st.List(ctx, "web"); len(after) != len(before)+2 {
		t.Errorf("%d manifests, want %d: the two admitted canaries and nothing else", len(after), len(before)+2)
	}
	// The floor is why gc may take generation 5: no channel can come
	// back for it.
	rep, err := store.GC(ctx, st, "web", store.GCOptions{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := digests(rep.Deleted); len(got) != 1 {
		t.Errorf("gc deleted %v, want generation 5 only", rep.Deleted)
	} else if _, ok := got[5]; !ok {
		t.Errorf("gc deleted %v, want generation 5", rep.Deleted)
	}
}

func TestGCWithoutChannelsKeepsAll(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	for g := int64(1); g <= 5; g++ {
		if err := st.Put(ctx, storetest.Manifest(t, "web", g, "")); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := store.GC(ctx, st, "web", store.GCOptions{Keep: 1, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 0 {
		t.Errorf("deleted %v from a release without channels: any of them could still be published", rep.Deleted)
	}
}

func TestParseInUse(t *testing.T) {
	d1, d2 := storetest.Manifest(t, "web", 1, "").Digest, storetest.Manifest(t, "web", 2, "").Digest
	for _, tc := range []struct {
		name, in string
		want     []manifest.Digest
	}{
		{"fleet report", `{"groups":[{"manifestDigest":"` + d1.String() + `","instances":3},{"manifestDigest":"` + d2.String() + `"}],"unreachable":[{"manifestDigest":""}]}`, []manifest.Digest{d1, d2}},
		{"agent status", `{"instance":"i-1","manifestDigest":"` + d1.String() + `"}`, []manifest.Digest{d1}},
		{"list", `["` + d2.String() + `"]`, []manifest.Digest{d2}},
	} {
		got, err := store.ParseInUse([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		set := map[manifest.Digest]bool{}
		for _, d := range got {
			set[d] = true
		}
		if len(set) != len(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		for _, d := range tc.want {
			if !set[d] {
				t.Errorf("%s: %s missing from %v", tc.name, d, got)
			}
		}
	}
	for _, bad := range []string{`{"manifestDigest":"sha256:zz"}`, `{}`, `not json`, `["x"]`} {
		var oe *verdict.OptionError
		if _, err := store.ParseInUse([]byte(bad)); !errors.As(err, &oe) || oe.Option != "InUse" {
			t.Errorf("ParseInUse(%s) = %v, want an OptionError of InUse", bad, err)
		}
	}
}

func TestRollback(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	ms := publish(t, st, "production", 1, 2, 3)
	publish(t, st, "staging", 5)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	// Unsigned, it is refused before anything is stored or moved.
	var ue *store.UnsignedError
	if _, err := store.Rollback(ctx, st, store.RollbackOptions{Release: "web", Channel: "production", To: ms[0].Digest.String(), Now: now}); !errors.As(err, &ue) {
		t.Fatalf("unsigned Rollback = %v, want an *UnsignedError", err)
	}
	if p, _ := st.Channel(ctx, "web", "production"); p.Generation != 3 {
		t.Fatalf("a refused rollback moved the channel to %d", p.Generation)
	}
	var signed []byte
	sign := func(_ context.Context, raw []byte) ([]byte, []byte, error) {
		signed = raw
		return []byte("c2lnbmF0dXJl"), nil, nil
	}
	r, err := store.Rollback(ctx, st, store.RollbackOptions{Release: "web", Channel: "production", To: ms[0].Digest.String(), By: "op", Now: now, Sign: sign})
	if err != nil {
		t.Fatal(err)
	}
	// Signed over the new manifest's exact bytes, and stored with it.
	if got, err := st.Get(ctx, "web", r.Manifest.Digest); err != nil || string(got.Signature) != "c2lnbmF0dXJl" || string(signed) != string(r.Manifest.Raw) {
		t.Errorf("the stored rollback: %v, signature %q; signed the new bytes: %v", err, got.Signature, string(signed) == string(r.Manifest.Raw))
	}
	// Above every channel of the release, staging's 5 included.
	if r.Pointer.Generation != 6 || !r.Manifest.Manifest.Release.CreatedAt.Equal(now) {
		t.Errorf("rollback = generation %d created %s, want 6 created %s", r.Pointer.Generation, r.Manifest.Manifest.Release.CreatedAt, now)
	}
	if r.Manifest.Manifest.Images[0].Digest != ms[0].Manifest.Images[0].Digest {
		t.Error("the rollback does not carry generation 1's images")
	}
	// It renders itself: one line of text, or the stable JSON.
	var text, js strings.Builder
	if err := r.Write(&text, "text"); err != nil {
		t.Fatal(err)
	}
	wantText := fmt.Sprintf("published production generation 6 %s: the content of generation 1 %s (signed)\n", r.Manifest.Digest, ms[0].Digest)
	if text.String() != wantText {
		t.Errorf("Write(text) = %q, want %q", text.String(), wantText)
	}
	if err := r.Write(&js, "json"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"channel": "production"`, `"fromGeneration": 1`, `"generation": 6`, `"published": true`, `"signed": true`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("Write(json) = %s, want it to hold %s", js.String(), want)
		}
	}
	for _, bad := range []string{"0", "sha256:1234", "latest"} {
		var oe *verdict.OptionError
		if _, err := store.Rollback(ctx, st, store.RollbackOptions{Release: "web", To: bad}); !errors.As(err, &oe) || oe.Option != "To" {
			t.Errorf("Rollback(To %s) = %v, want an OptionError of To", bad, err)
		}
	}
	if _, err := store.Rollback(ctx, st, store.RollbackOptions{Release: "web", To: "42"}); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("Rollback(To 42) = %v, want ErrNotFound", err)
	}
	// An expiring release keeps its lifetime from now.
	m := storetest.Manifest(t, "web", 7, "")
	exp := m.Manifest.Release.CreatedAt.Add(72 * time.Hour)
	m.Manifest.Release.ExpiresAt = &exp
	raw, _ := m.Manifest.Indent()
	m, _ = manifest.NewSigned(raw, "test")
	if _, err := store.Publish(ctx, st, m, "production", "test"); err != nil {
		t.Fatal(err)
	}
	r, err = store.Rollback(ctx, st, store.RollbackOptions{Release: "web", Channel: "production", To: "7", Now: now, NoPublish: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Pointer != nil {
		t.Error("NoPublish moved the channel")
	}
	if e := r.Manifest.Manifest.Release.ExpiresAt; e == nil || !e.Equal(now.Add(72*time.Hour)) {
		t.Errorf("rollback expires %v, want %s", e, now.Add(72*time.Hour))
	}
	if _, err := st.Get(ctx, "web", r.Manifest.Digest); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("NoPublish stored the manifest: %v", err)
	}
}

// down is a Store whose every call fails as an unreachable server does.
type down struct{ manifest.Store }

func (down) Channel(context.Context, string, string) (*manifest.Pointer, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
}

func TestChannelSource(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	ms := publish(t, st, "production", 1, 2)
	got, err := store.ChannelSource{Store: st, Release: "web"}.Fetch(ctx)
	if err != nil || got.Digest != ms[1].Digest {
		t.Fatalf("Fetch = %v, %v; want generation 2", got, err)
	}
	if _, err := (store.ChannelSource{Store: st, Release: "web", Channel: "canary"}).Fetch(ctx); !errors.Is(err, manifest.ErrNotFound) || verdict.IsUnavailable(err) {
		t.Errorf("Fetch(missing channel) = %v, want ErrNotFound", err)
	}
	if _, err := (store.ChannelSource{Store: down{st}, Release: "web", Name: "s3://b"}).Fetch(ctx); !verdict.IsUnavailable(err) {
		t.Errorf("Fetch(unreachable) = %v, want UnavailableError", err)
	}
}

func TestGCNegativeKeep(t *testing.T) {
	st := newStore(t)
	publish(t, st, "production", 1, 2)
	var oe *verdict.OptionError
	if r, err := store.GC(context.Background(), st, "web", store.GCOptions{Keep: -1, Delete: true}); !errors.As(err, &oe) || oe.Option != "Keep" || r != nil {
		t.Errorf("GC(Keep -1) = %v, %v; want an OptionError of Keep and no report", r, err)
	}
	if ds, err := st.List(context.Background(), "web"); err != nil || len(ds) != 2 {
		t.Errorf("after a refused GC: %v, %v; want both manifests kept", ds, err)
	}
}

func TestGCOptionsAddReport(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	var o store.GCOptions
	if err := o.AddReport([]byte(`["` + d("1") + `"]`)); err != nil {
		t.Fatal(err)
	}
	report := `{"manifestDigest":"` + d("2") + `","instances":[{"release":"web","generation":3,"running":"` + d("3") + `"}]}`
	if err := o.AddReport([]byte(report)); err != nil {
		t.Fatal(err)
	}
	want := store.GCOptions{
		InUse:   []manifest.Digest{manifest.MustParseDigest(d("1")), manifest.MustParseDigest(d("2"))},
		Running: store.Running{Images: []manifest.Digest{manifest.MustParseDigest(d("3"))}, Generations: map[string][]int64{"web": {3}}},
	}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("after two reports: %+v, want %+v", o, want)
	}
	var oe *verdict.OptionError
	if err := o.AddReport([]byte(`{}`)); !errors.As(err, &oe) || !reflect.DeepEqual(o, want) {
		t.Errorf("AddReport({}) = %v, options %+v; want an OptionError and the options unchanged", err, o)
	}
}

// TestChannelSourcePrevious: a release or channel that does not exist yet
// has no previous manifest, and that is no error; one that exists is read.
func TestChannelSourcePrevious(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	src := store.ChannelSource{Store: st, Release: "web", Channel: "production"}
	if s, err := src.Previous(ctx); s != nil || err != nil {
		t.Fatalf("Previous of an empty store = %v, %v; want nil, nil", s, err)
	}
	publish(t, st, "production", 3)
	if s, err := src.Previous(ctx); err != nil || s == nil || s.Manifest.Release.Generation != 3 {
		t.Fatalf("Previous after publishing generation 3 = %v, %v", s, err)
	}
	other := store.ChannelSource{Store: st, Release: "web", Channel: "staging"}
	if s, err := other.Previous(ctx); s != nil || err != nil {
		t.Errorf("Previous of a channel not yet moved = %v, %v; want nil, nil", s, err)
	}
}

// TestNotFoundKeepsItsCause: a channel the store lacks is a
// *store.NotFoundError that lists what the store holds and keeps the
// store's own answer, which is manifest.ErrNotFound.
func TestNotFoundKeepsItsCause(t *testing.T) {
	st := newStore(t)
	publish(t, st, "production", 1)
	_, err := store.Status(context.Background(), st, "web", "staging")
	var nf *store.NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, manifest.ErrNotFound) || nf.Err == nil || !slices.Equal(nf.Channels, []string{"production"}) {
		t.Fatalf("Status of a missing channel = %v (%#v); want a NotFoundError keeping the store's not-found, listing production", err, nf)
	}
}
