package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// countingRegistry is the in-memory registry behind a handler that counts
// requests by "METHOD kind repository" (kind: manifests or blobs; the ping
// is not counted) and lets a test answer a request itself (hook returns
// true when it wrote the answer).
type countingRegistry struct {
	host string
	mu   sync.Mutex
	n    map[string]int
	hook func(w http.ResponseWriter, r *http.Request) bool
}

func newCountingRegistry(t *testing.T) *countingRegistry {
	t.Helper()
	c := &countingRegistry{n: map[string]int{}}
	reg := registry.New(registry.Logger(nopLogger()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			repo, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/manifests/")
			kind := "manifests"
			if rest == "" {
				repo, _, _ = strings.Cut(repo, "/blobs/")
				kind = "blobs"
			}
			c.mu.Lock()
			c.n[r.Method+" "+kind+" "+repo]++
			hook := c.hook
			c.mu.Unlock()
			if hook != nil && hook(w, r) {
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.host = strings.TrimPrefix(srv.URL, "http://")
	return c
}

// counts returns the counts since the last call, and resets them.
func (c *countingRegistry) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func (c *countingRegistry) setHook(h func(w http.ResponseWriter, r *http.Request) bool) {
	c.mu.Lock()
	c.hook = h
	c.mu.Unlock()
}

// tagImage pushes img under ref.
func tagImage(t *testing.T, ref string, img v1.Image) {
	t.Helper()
	if err := remote.Write(mustRef(t, ref), img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
}

// TestPinFetchesSharedObjectsOnce: one image under ten tags costs ten
// manifest GETs and one config GET, even with no cache; an index under two
// tags, each platform manifest once. Each repository is still asked for
// its own objects, and every tag is still asked.
func TestPinFetchesSharedObjectsOnce(t *testing.T) {
	reg := newCountingRegistry(t)
	img := pushImage(t, reg.host+"/app:t0", "linux", "arm64")
	idx, imgs := pushIndex(t, reg.host+"/multi:v1", true)
	var reqs []Request
	for i := range 10 {
		ref := fmt.Sprintf("%s/app:t%d", reg.host, i)
		tagImage(t, ref, img)
		reqs = append(reqs, Request{Ref: ref})
	}
	tagImage(t, reg.host+"/other:v1", img)
	if err := remote.WriteIndex(mustRef(t, reg.host+"/multi:latest"), idx); err != nil {
		t.Fatal(err)
	}
	reqs = append(reqs, Request{Ref: reg.host + "/other:v1"}, Request{Ref: reg.host + "/multi:v1"}, Request{Ref: reg.host + "/multi:latest"})
	reg.counts()
	for _, cache := range []string{"", t.TempDir()} {
		opt := fastOptions()
		opt.Cache = cache
		ims, err := PinAll(context.Background(), reqs, opt)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"GET manifests app": 10, "GET manifests other": 1, "GET manifests multi": 2 + 2} // two tags, two platforms (the attestation is skipped before any fetch)
		got := reg.counts()
		configs := [2]int{got["GET blobs app"], got["GET blobs other"]}
		delete(got, "GET blobs app")
		delete(got, "GET blobs other")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("cache %q: manifest requests %v, want %v", cache, got, want)
		}
		// Each repository is asked for its config. The cache is by digest
		// alone: with it, one repository's may be the other's, if written
		// in this run before it asks.
		if configs != [2]int{1, 1} && (cache == "" || configs[0]+configs[1] != 1) {
			t.Errorf("cache %q: config GETs of app and other %v, want one each", cache, configs)
		}
		for _, im := range ims[:11] {
			if p := im.Platforms; len(p) != 1 || p[0].Digest != digestOf(t, img) || p[0].Config != configOf(t, img) || p[0].String() != "linux/arm64" {
				t.Errorf("cache %q: %s pinned to %+v, want linux/arm64 %s config %s", cache, im.Ref, p, digestOf(t, img), configOf(t, img))
			}
		}
		for _, im := range ims[11:] {
			if im.Digest != digestOf(t, idx) || len(im.Platforms) != 2 || im.Platforms[1].Config != configOf(t, imgs[1]) {
				t.Errorf("cache %q: %s = %+v, want index %s with two platforms", cache, im.Ref, im, digestOf(t, idx))
			}
		}
		if cache == "" {
			continue
		}
		// Warm: a HEAD a tag, nothing else.
		if _, err := PinAll(context.Background(), reqs, opt); err != nil {
			t.Fatal(err)
		}
		want = map[string]int{"HEAD manifests app": 10, "HEAD manifests other": 1, "HEAD manifests multi": 2}
		if got := reg.counts(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("warm: requests %v, want %v", got, want)
		}
	}
}

// TestPinSharedConfigServedWrong: a registry that serves other bytes for a
// config that five tags share pins none of them (the first such failure
// stops the rest: it is a registry's). One that fails a tag's fetch of a
// shared config as not found fails that tag only: its failure is not kept
// for the others, which fetch the config again.
func TestPinSharedConfigServedWrong(t *testing.T) {
	reg := newCountingRegistry(t)
	img := pushImage(t, reg.host+"/app:t0", "linux", "amd64")
	var reqs []Request
	for i := range 5 {
		ref := fmt.Sprintf("%s/app:t%d", reg.host, i)
		tagImage(t, ref, img)
		reqs = append(reqs, Request{Ref: ref})
	}
	cfg := configOf(t, img).String()
	var bad atomic.Int64 // how many bad answers are left to give
	var notFound atomic.Bool
	reg.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/blobs/"+cfg) || bad.Add(-1) < 0 {
			return false
		}
		if notFound.Load() {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown"}]}`))
			return true
		}
		w.Write([]byte(`{"architecture":"arm64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`))
		return true
	})
	for _, conc := range []int{1, 16} {
		bad.Store(1 << 20)
		opt := fastOptions()
		opt.Concurrency = conc
		ims, err := PinAll(context.Background(), reqs, opt)
		if !verdict.IsUnavailable(err) || ims != nil || !strings.Contains(fmt.Sprint(err), "checksum") {
			t.Errorf("config served wrong, concurrency %d: PinAll = %v, %v; want no images and unavailable (a checksum error)", conc, ims, err)
		}
	}
	notFound.Store(true)
	bad.Store(1)
	reg.counts()
	opt := fastOptions()
	opt.Concurrency = 1 // t0 fails; t1 fetches again, and t2-t4 take t1's
	_, err := PinAll(context.Background(), reqs, opt)
	if !errors.Is(err, ErrImageNotFound) || !strings.Contains(fmt.Sprint(err), reqs[0].Ref+":") {
		t.Errorf("config not found once: PinAll = %v, want %s not found", err, reqs[0].Ref)
	}
	for _, q := range reqs[1:] {
		if strings.Contains(fmt.Sprint(err), q.Ref+":") {
			t.Errorf("config not found once: PinAll = %v, names %s too; want t0's failure only", err, q.Ref)
		}
	}
	if got := reg.counts()["GET blobs app"]; got != 2 {
		t.Errorf("config not found once: %d config GETs, want 2 (the failure, then one kept for the rest)", got)
	}
	// Served right again: pinned.
	bad.Store(0)
	if _, err := PinAll(context.Background(), reqs, fastOptions()); err != nil {
		t.Errorf("PinAll served right: %v", err)
	}
}

// TestPinTagMovedMidRun: a tag moved while the run goes on is pinned to
// what it names when asked, with its own config, never to what another tag
// of the same image fetched before.
func TestPinTagMovedMidRun(t *testing.T) {
	reg := newCountingRegistry(t)
	old := pushImage(t, reg.host+"/app:t1", "linux", "amd64")
	tagImage(t, reg.host+"/app:t2", old)
	moved := pushImage(t, reg.host+"/app:next", "linux", "arm64")
	cfg := configOf(t, old).String()
	var once sync.Once
	reg.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/blobs/"+cfg) {
			once.Do(func() { tagImage(t, reg.host+"/app:t2", moved) }) // t1's config fetched: move t2
		}
		return false
	})
	opt := fastOptions()
	opt.Concurrency = 1 // t1, its config, then t2
	ims, err := PinAll(context.Background(), []Request{{Ref: reg.host + "/app:t1"}, {Ref: reg.host + "/app:t2"}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		digest, config manifest.Digest
		platform       string
	}{{digestOf(t, old), configOf(t, old), "linux/amd64"}, {digestOf(t, moved), configOf(t, moved), "linux/arm64"}}
	for i, w := range want {
		p := ims[i].Platforms
		if ims[i].Digest != w.digest || len(p) != 1 || p[0].Config != w.config || p[0].String() != w.platform {
			t.Errorf("%s = %+v, want %s config %s on %s", ims[i].Ref, ims[i], w.digest, w.config, w.platform)
		}
	}
}

// TestFetchedObjects: only bytes that hash to their digest are kept and
// returned; a failed fetch is not kept; waiters share one fetch.
func TestFetchedObjects(t *testing.T) {
	good := []byte(`{"os":"linux"}`)
	d := v1.Hash{Algorithm: "sha256", Hex: manifest.SHA256(good).Hex}
	var o fetchedObjects
	var wrongBytes *wrongBytesError
	if _, err := o.get("r", d, func() ([]byte, error) { return []byte(`{"os":"plan9"}`), nil }); !errors.As(err, &wrongBytes) {
		t.Errorf("get of bytes that do not hash to the digest = %v, want a *wrongBytesError", err)
	}
	if _, err := o.get("r", v1.Hash{Algorithm: "sha512", Hex: strings.Repeat("0", 128)}, func() ([]byte, error) { return good, nil }); !errors.As(err, &wrongBytes) {
		t.Errorf("get under a sha512 digest = %v, want a *wrongBytesError", err)
	}
	boom := errors.New("boom")
	if _, err := o.get("r", d, func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("get of a failed fetch = %v, want its error", err)
	}
	var fetches atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := o.get("r", d, func() ([]byte, error) { fetches.Add(1); <-release; return good, nil })
			if err != nil || string(b) != string(good) {
				t.Errorf("get = %q, %v; want %q", b, err, good)
			}
		}()
	}
	close(release)
	wg.Wait()
	if n := fetches.Load(); n != 1 {
		t.Errorf("8 gets of one object fetched it %d times, want once (the failures before were not kept)", n)
	}
	if _, err := o.get("other", d, func() ([]byte, error) { fetches.Add(1); return good, nil }); err != nil || fetches.Load() != 2 {
		t.Errorf("get from another repository = %v after %d fetches, want its own fetch", err, fetches.Load())
	}
}
