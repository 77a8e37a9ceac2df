package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// Raw reads and writes a backend's objects behind the Store's back, by key
// relative to the store's root ("web/channels/production.json").
type Raw struct {
	Write func(key string, data []byte) error
	Read  func(key string) ([]byte, error)
}

// RunCorrupt checks that damaged store content is a clear error and that
// nothing overwrites it: a truncated pointer document, a pointer naming a
// missing manifest, a manifest whose digest does not match its name.
func RunCorrupt(t *testing.T, newStore func(t *testing.T) (manifest.Store, Raw)) {
	t.Run("TruncatedPointer", func(t *testing.T) {
		st, raw := newStore(t)
		ctx := context.Background()
		mustPublish(t, st, Manifest(t, "web", 1, ""), "production")
		key := "web/channels/production.json"
		full := mustRead(t, raw, key)
		cut := full[:len(full)/2]
		mustWrite(t, raw, key, cut)
		_, err := st.Channel(ctx, "web", "production")
		wantCorrupt(t, "Channel", err, "truncated")
		next := Manifest(t, "web", 2, "")
		_, err = store.Publish(ctx, st, next, "production", "storetest")
		wantCorrupt(t, "Publish over it", err, "truncated")
		if got := mustRead(t, raw, key); !bytes.Equal(got, cut) {
			t.Errorf("Publish overwrote the damaged pointer with:\n%s", got)
		}
		_, err = store.ChannelSource{Store: st, Release: "web", Channel: "production"}.Fetch(ctx)
		wantCorrupt(t, "ChannelSource.Fetch", err, "truncated")
		_, err = store.GC(ctx, st, "web", store.GCOptions{Keep: 0, Delete: true})
		wantCorrupt(t, "GC", err, "truncated")
		if _, err := st.Get(ctx, "web", Manifest(t, "web", 1, "").Digest); err != nil {
			t.Errorf("GC deleted with a damaged pointer: %v", err)
		}
	})
	t.Run("PointerToMissingManifest", func(t *testing.T) {
		st, raw := newStore(t)
		ctx := context.Background()
		s := Manifest(t, "web", 1, "")
		mustPublish(t, st, s, "production")
		if err := st.Delete(ctx, "web", s.Digest); err != nil {
			t.Fatal(err)
		}
		key := "web/channels/production.json"
		before := mustRead(t, raw, key)
		_, err := store.ChannelSource{Store: st, Release: "web", Channel: "production"}.Fetch(ctx)
		wantCorrupt(t, "ChannelSource.Fetch", err, "not in the store")
		_, err = store.Status(ctx, st, "web", "production")
		wantCorrupt(t, "Status", err, "not in the store")
		if got := mustRead(t, raw, key); !bytes.Equal(got, before) {
			t.Errorf("reading changed the pointer")
		}
	})
	t.Run("ManifestDigestMismatch", func(t *testing.T) {
		st, raw := newStore(t)
		ctx := context.Background()
		s, other := Manifest(t, "web", 1, ""), Manifest(t, "web", 2, "")
		mustPut(t, st, s)
		key := "web/manifests/" + s.Digest.String() + ".json"
		// Another valid manifest's bytes under s's name.
		mustWrite(t, raw, key, other.Raw)
		_, err := st.Get(ctx, "web", s.Digest)
		wantCorrupt(t, "Get", err, other.Digest.String())
		err = st.Put(ctx, s)
		wantCorrupt(t, "Put over it", err, other.Digest.String())
		if got := mustRead(t, raw, key); !bytes.Equal(got, other.Raw) {
			t.Errorf("Put overwrote the damaged manifest")
		}
		_, err = st.Move(ctx, "production", s, "storetest")
		wantCorrupt(t, "Move to it", err, other.Digest.String())
		if _, err := st.Channel(ctx, "web", "production"); !errors.Is(err, manifest.ErrNotFound) {
			t.Errorf("Move to a damaged manifest created the channel: %v", err)
		}
		// Not JSON at all.
		mustWrite(t, raw, key, []byte(`{"apiVersion":"lockstep.dev/v1","kind":"Rel`))
		_, err = st.Get(ctx, "web", s.Digest)
		wantCorrupt(t, "Get(truncated manifest)", err, "not a valid manifest")
	})
}

func wantCorrupt(t *testing.T, what string, err error, reason string) {
	t.Helper()
	var ce *manifest.CorruptError
	if !errors.As(err, &ce) {
		t.Errorf("%s = %v, want a *manifest.CorruptError", what, err)
		return
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("%s = %q, want it to say %q", what, err, reason)
	}
}

func mustRead(t *testing.T, raw Raw, key string) []byte {
	t.Helper()
	b, err := raw.Read(key)
	if err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	return b
}

func mustWrite(t *testing.T, raw Raw, key string, data []byte) {
	t.Helper()
	if err := raw.Write(key, data); err != nil {
		t.Fatalf("writing %s: %v", key, err)
	}
}
