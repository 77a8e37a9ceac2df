package blobstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/blobstore"
)

// memBlobs is blobstore.Blobs in a map, recording every write.
type memBlobs struct {
	mu     sync.Mutex
	blobs  map[string][]byte
	writes []string
	// beforeCreate, if set, runs before each Create (a concurrent writer).
	beforeCreate func(name string)
	// fail makes operations on a name fail.
	fail map[string]error
}

func newMem() *memBlobs { return &memBlobs{blobs: map[string][]byte{}, fail: map[string]error{}} }

func name(release string, d manifest.Digest) string {
	return release + "/manifests/" + d.String() + ".json"
}

func (b *memBlobs) Name(release string, d manifest.Digest) (string, error) {
	return name(release, d), nil
}

func (b *memBlobs) Create(_ context.Context, n string, data []byte) error {
	if b.beforeCreate != nil {
		b.beforeCreate(n)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.fail[n]; err != nil {
		return err
	}
	if _, ok := b.blobs[n]; ok {
		return fmt.Errorf("%s: %w", n, fs.ErrExist)
	}
	b.blobs[n] = slices.Clone(data)
	b.writes = append(b.writes, "create "+n)
	return nil
}

func (b *memBlobs) Replace(_ context.Context, n string, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.fail[n]; err != nil {
		return err
	}
	b.blobs[n] = slices.Clone(data)
	b.writes = append(b.writes, "replace "+n)
	return nil
}

func (b *memBlobs) Delete(_ context.Context, n string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.fail[n]; err != nil {
		return err
	}
	delete(b.blobs, n)
	return nil
}

func (b *memBlobs) List(_ context.Context, release, dir string) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for n := range b.blobs {
		rest, ok := strings.CutPrefix(n, release+"/"+dir+"/")
		if base, json := strings.CutSuffix(rest, ".json"); ok && json {
			out = append(out, base)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (b *memBlobs) Stored(_ context.Context, release string, d manifest.Digest) (*manifest.Signed, error) {
	b.mu.Lock()
	raw, ok := b.blobs[name(release, d)]
	b.mu.Unlock()
	if !ok {
		return nil, manifest.ErrNotFound
	}
	return manifest.CheckStored(raw, name(release, d), release, d)
}

var quiet = slog.New(slog.DiscardHandler)

func put(t *testing.T, b *memBlobs, m *manifest.Signed) error {
	t.Helper()
	return blobstore.Put(context.Background(), b, m, quiet)
}

func TestPutFreshWritesManifestThenSidecars(t *testing.T) {
	b := newMem()
	m := storetest.Signed(storetest.Manifest(t, "web", 1, "a"))
	if err := put(t, b, m); err != nil {
		t.Fatal(err)
	}
	n := name("web", m.Digest)
	base := strings.TrimSuffix(n, ".json")
	want := []string{"create " + n, "replace " + base + manifest.SignatureSuffix, "replace " + base + manifest.BundleSuffix}
	if !slices.Equal(b.writes, want) {
		t.Errorf("writes = %q, want %q", b.writes, want)
	}
	if string(b.blobs[base+manifest.SignatureSuffix]) != string(m.Signature) {
		t.Error("the signature is not stored")
	}
}

func TestPutAgainKeepsWhatIsThere(t *testing.T) {
	b := newMem()
	unsigned := storetest.Manifest(t, "web", 1, "a")
	if err := put(t, b, unsigned); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(name("web", unsigned.Digest), ".json")
	b.blobs[base+manifest.BundleSuffix] = []byte("the bundle there")
	b.writes = nil
	// The same bytes, now signed: the missing signature is added, the
	// bundle there is kept, the manifest is not rewritten.
	if err := put(t, b, storetest.Signed(unsigned)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"create " + base + manifest.SignatureSuffix}; !slices.Equal(b.writes, want) {
		t.Errorf("writes = %q, want %q", b.writes, want)
	}
	if got := string(b.blobs[base+manifest.BundleSuffix]); got != "the bundle there" {
		t.Errorf("bundle = %q, want the one there", got)
	}
}

// TestPutOtherBytesWritesNothing: the same manifest stored with other
// bytes (canonical, where m is indented) keeps them and gets no sidecar:
// the signature there is over the stored bytes.
func TestPutOtherBytesWritesNothing(t *testing.T) {
	b := newMem()
	m := storetest.Manifest(t, "web", 1, "a")
	canonical, err := m.Manifest.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(canonical) == string(m.Raw) {
		t.Fatal("the fixture is canonical already; the test needs other bytes of the same manifest")
	}
	b.blobs[name("web", m.Digest)] = canonical
	if err := put(t, b, storetest.Signed(m)); err != nil || len(b.writes) != 0 {
		t.Errorf("Put over other bytes = %v with writes %q; want nil and no write", err, b.writes)
	}
	if string(b.blobs[name("web", m.Digest)]) != string(canonical) {
		t.Error("the stored bytes changed")
	}
}

// TestPutLosesTheRace: a concurrent Put creates the manifest between the
// read and the create; this Put checks what the winner stored and adds
// only missing sidecars.
func TestPutLosesTheRace(t *testing.T) {
	b := newMem()
	m := storetest.Signed(storetest.Manifest(t, "web", 1, "a"))
	n := name("web", m.Digest)
	b.beforeCreate = func(created string) {
		if created == n {
			b.mu.Lock()
			b.blobs[n] = slices.Clone(m.Raw)
			b.mu.Unlock()
		}
	}
	if err := put(t, b, m); err != nil {
		t.Fatalf("Put after losing the race: %v", err)
	}
	base := strings.TrimSuffix(n, ".json")
	want := []string{"create " + base + manifest.SignatureSuffix, "create " + base + manifest.BundleSuffix}
	if !slices.Equal(b.writes, want) {
		t.Errorf("writes = %q, want %q", b.writes, want)
	}
}

func TestPutErrors(t *testing.T) {
	m := storetest.Signed(storetest.Manifest(t, "web", 1, "a"))
	n := name("web", m.Digest)
	disk := errors.New("disk full")

	b := newMem()
	b.fail[n] = disk
	if err := put(t, b, m); !errors.Is(err, disk) || !strings.Contains(err.Error(), "putting "+m.Digest.String()) {
		t.Errorf("Put with a failing create = %v, want the cause, naming the digest", err)
	}

	b = newMem()
	b.fail[strings.TrimSuffix(n, ".json")+manifest.BundleSuffix] = disk
	if err := put(t, b, m); !errors.Is(err, disk) || !strings.Contains(err.Error(), manifest.BundleSuffix) {
		t.Errorf("Put with a failing bundle write = %v, want the cause, naming the bundle", err)
	}

	blank := *m
	blank.Signature = []byte(" \n")
	if err := put(t, newMem(), &blank); err == nil {
		t.Error("Put of a blank signature: no error")
	}
	if err := blobstore.Put(context.Background(), newMem(), nil, quiet); err == nil {
		t.Error("Put(nil): no error")
	}
}

func TestDelete(t *testing.T) {
	b := newMem()
	m := storetest.Signed(storetest.Manifest(t, "web", 1, "a"))
	other := storetest.Manifest(t, "web", 2, "a")
	for _, s := range []*manifest.Signed{m, other} {
		if err := put(t, b, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := blobstore.Delete(context.Background(), b, "web", m.Digest, quiet); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(b.blobs)); !slices.Equal(got, []string{name("web", other.Digest)}) {
		t.Errorf("after Delete: %q, want only the other manifest", got)
	}
	// Again: nothing is there, which is not an error.
	if err := blobstore.Delete(context.Background(), b, "web", m.Digest, quiet); err != nil {
		t.Errorf("Delete of a deleted manifest: %v", err)
	}
	b.fail[name("web", other.Digest)] = errors.New("denied")
	if err := blobstore.Delete(context.Background(), b, "web", other.Digest, quiet); err == nil {
		t.Error("Delete with a failing blob delete: no error")
	}
}

func TestListAndChannels(t *testing.T) {
	b := newMem()
	m1, m2 := storetest.Manifest(t, "web", 1, "a"), storetest.Manifest(t, "web", 2, "a")
	for _, m := range []*manifest.Signed{m1, m2, storetest.Manifest(t, "api", 1, "a")} {
		if err := put(t, b, m); err != nil {
			t.Fatal(err)
		}
	}
	b.blobs["web/manifests/not-a-digest.json"] = []byte("{}")
	b.blobs["web/channels/production.json"] = []byte("{}")
	b.blobs["web/channels/Not A Name.json"] = []byte("{}")
	ds, err := blobstore.List(context.Background(), b, "web")
	want := []manifest.Digest{m1.Digest, m2.Digest}
	slices.SortFunc(want, func(x, y manifest.Digest) int { return strings.Compare(x.String(), y.String()) })
	if err != nil || !slices.Equal(ds, want) {
		t.Errorf("List(web) = %v, %v; want %v (the other release's and a non-digest name left out)", ds, err, want)
	}
	cs, err := blobstore.Channels(context.Background(), b, "web")
	if err != nil || !slices.Equal(cs, []string{"production"}) {
		t.Errorf("Channels(web) = %q, %v; want [production]", cs, err)
	}
}

func TestNextPointer(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	m2 := storetest.Manifest(t, "web", 2, "a")
	cur, err := manifest.NextPointer(nil, "live", storetest.Manifest(t, "web", 1, "a"), "ci", now)
	if err != nil {
		t.Fatal(err)
	}
	// A channel that exists moves above it; one not found is created.
	if p, err := blobstore.NextPointer(cur, nil, "live", m2, "ci", now); err != nil || p.Generation != 2 {
		t.Errorf("NextPointer(gen 1) = %+v, %v; want generation 2", p, err)
	}
	notFound := fmt.Errorf("channel live of release web: %w", manifest.ErrNotFound)
	if p, err := blobstore.NextPointer(nil, notFound, "live", m2, "ci", now); err != nil || p.Generation != 2 {
		t.Errorf("NextPointer(not found) = %+v, %v; want generation 2 on a new channel", p, err)
	}
	// Another read error is returned as it is; a generation that does not
	// rise is manifest.NextPointer's *GenerationError.
	broken := errors.New("bucket gone")
	if p, err := blobstore.NextPointer(nil, broken, "live", m2, "ci", now); p != nil || !errors.Is(err, broken) {
		t.Errorf("NextPointer(read error) = %+v, %v; want the read error", p, err)
	}
	var ge *manifest.GenerationError
	if _, err := blobstore.NextPointer(cur, nil, "live", storetest.Manifest(t, "web", 1, "b"), "ci", now); !errors.As(err, &ge) {
		t.Errorf("NextPointer(gen 1 over gen 1) = %v, want a *GenerationError", err)
	}
}
