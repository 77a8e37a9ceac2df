package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/verdict"
)

// TestPinIndexFetchesPlatformsConcurrently: an index's platform manifests
// are fetched at once, not one after another, at most indexFetches at a
// time, and its platforms come out in the index's order. When two entries
// fail, the first entry's failure is the one returned; a wrong answer for
// one entry fails the pin.
func TestPinIndexFetchesPlatformsConcurrently(t *testing.T) {
	reg := newCountingRegistry(t)
	plats := []string{"linux/amd64", "linux/arm64/v8", "linux/arm/v7", "linux/ppc64le", "linux/s390x", "linux/386", "linux/riscv64",
		"linux/mips64le", "windows/amd64", "linux/loong64"}
	idx, err := memregistry.PushIndex(reg.host+"/multi:v1", plats...)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	child := func(r *http.Request, i int) bool {
		return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/manifests/"+im.Manifests[i].Digest.String())
	}
	var inflight, peak atomic.Int64
	var failWith atomic.Value // func(w, r) bool
	failWith.Store(func(http.ResponseWriter, *http.Request) bool { return false })
	reg.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/manifests/sha256:") {
			return false
		}
		if failWith.Load().(func(http.ResponseWriter, *http.Request) bool)(w, r) {
			return true
		}
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(5 * time.Millisecond) // let the fetches overlap
		return false
	})
	opt := fastOptions()
	opt.Concurrency = 1
	got, err := Pin(context.Background(), "multi", reg.host+"/multi:v1", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Platforms) != len(plats) {
		t.Fatalf("pinned %d platforms, want %d", len(got.Platforms), len(plats))
	}
	for i, p := range got.Platforms {
		if p.String() != plats[i] || p.Digest.String() != im.Manifests[i].Digest.String() {
			t.Errorf("platform %d = %s %s, want %s %s (the index's order)", i, p, p.Digest, plats[i], im.Manifests[i].Digest)
		}
	}
	if p := peak.Load(); p < 2 || p > indexFetches {
		t.Errorf("peak platform manifests in flight = %d, want between 2 and %d", p, indexFetches)
	}

	// Entries 2 and 6 fail: 6 at once, 2 after a while; 2's failure is
	// returned, whichever came first.
	failWith.Store(func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case child(r, 6):
			w.WriteHeader(http.StatusNotFound)
			return true
		case child(r, 2):
			time.Sleep(20 * time.Millisecond)
			w.Write([]byte(`{"schemaVersion":2}`)) // not the bytes of its digest
			return true
		}
		return false
	})
	_, err = Pin(context.Background(), "multi", reg.host+"/multi:v1", opt)
	if !verdict.IsUnavailable(err) || errors.Is(err, ErrImageNotFound) || !strings.Contains(fmt.Sprint(err), im.Manifests[2].Digest.String()) {
		t.Errorf("entries 2 (wrong bytes) and 6 (not found) failing: Pin = %v, want entry 2's error (unavailable, not not-found)", err)
	}
	// Entry 6 alone fails: its error, whatever its siblings did.
	failWith.Store(func(w http.ResponseWriter, r *http.Request) bool {
		if child(r, 6) {
			w.WriteHeader(http.StatusNotFound)
			return true
		}
		return false
	})
	if _, err = Pin(context.Background(), "multi", reg.host+"/multi:v1", opt); !errors.Is(err, ErrImageNotFound) {
		t.Errorf("entry 6 not found: Pin = %v, want not found", err)
	}
}

// TestPinIndexEntriesWithoutPlatform: entries without a platform take
// theirs from their configs, fetched concurrently; with Platform, the
// others are named as available, in the index's order.
func TestPinIndexEntriesWithoutPlatform(t *testing.T) {
	host := memRegistry(t)
	var adds []mutate.IndexAddendum
	var imgs []v1.Image
	for i, p := range []string{"linux/amd64", "linux/arm64", "unknown/unknown", "linux/s390x"} {
		os, arch, _ := strings.Cut(p, "/")
		img := pushImage(t, fmt.Sprintf("%s/app:p%d", host, i), os, arch)
		imgs = append(imgs, img)
		adds = append(adds, mutate.IndexAddendum{Add: img})
	}
	if err := remote.WriteIndex(mustRef(t, host+"/app:idx"), mutate.AppendManifests(empty.Index, adds...)); err != nil {
		t.Fatal(err)
	}
	got, err := Pin(context.Background(), "app", host+"/app:idx", fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got.Platforms {
		names = append(names, p.String())
	}
	if s := strings.Join(names, " "); s != "linux/amd64 linux/arm64 linux/s390x" {
		t.Errorf("platforms %q, want linux/amd64 linux/arm64 linux/s390x (unknown/unknown skipped)", s)
	}
	if len(got.Platforms) == 3 && got.Platforms[2].Config != configOf(t, imgs[3]) {
		t.Errorf("linux/s390x config %s, want %s", got.Platforms[2].Config, configOf(t, imgs[3]))
	}
	opt := fastOptions()
	opt.Platform = "linux/riscv64"
	_, err = Pin(context.Background(), "app", host+"/app:idx", opt)
	var pe *PlatformError
	if !errors.As(err, &pe) || strings.Join(pe.Available, " ") != "linux/amd64 linux/arm64 linux/s390x" {
		t.Errorf("Pin for linux/riscv64 = %v, want a *PlatformError naming linux/amd64 linux/arm64 linux/s390x", err)
	}
}
