package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestCache(t *testing.T) {
	reg := registry.New(registry.Logger(nopLogger()))
	var reqs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			reqs.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	pushImage(t, host+"/app:v1", "linux", "amd64")
	pushIndex(t, host+"/multi:v1", true)
	dir := t.TempDir()
	opt := fastOptions()
	opt.Cache = dir
	want := map[string]int64{"app:v1": 2, "multi:v1": 3} // cold: manifest + config; index + two platforms
	var first = map[string]string{}
	for _, round := range []string{"cold", "warm"} {
		for ref, n := range want {
			reqs.Store(0)
			im, err := Pin(context.Background(), "web", host+"/"+ref, opt)
			if err != nil {
				t.Fatal(err)
			}
			if round == "warm" {
				n = 1
				if got := im.Platforms[len(im.Platforms)-1].Config.String(); got != first[ref] {
					t.Errorf("warm %s config %s, cold %s", ref, got, first[ref])
				}
			}
			first[ref] = im.Platforms[len(im.Platforms)-1].Config.String()
			if got := reqs.Load(); got != n {
				t.Errorf("%s pin of %s: %d requests, want %d", round, ref, got, n)
			}
		}
	}
	// A damaged cache entry is a miss, refetched and repaired.
	files, _ := filepath.Glob(filepath.Join(dir, "sha256", "*"))
	if len(files) != 5 {
		t.Fatalf("cache holds %d objects, want 5 (a manifest and its config, an index and its two platform manifests)", len(files))
	}
	for _, f := range files {
		os.WriteFile(f, []byte(`{"os":"plan9"}`), 0o644)
	}
	reqs.Store(0)
	im, err := Pin(context.Background(), "web", host+"/app:v1", opt)
	if err != nil || im.Platforms[0].OS != "linux" || reqs.Load() != 3 {
		t.Errorf("pin over a damaged cache = %+v, %v after %d requests; want linux after 3 (HEAD, GET, config)", im, err, reqs.Load())
	}

	// A tag re-pushed: the HEAD names a digest not cached; the new one is
	// fetched, never the cached one returned.
	now := digestOf(t, pushImage(t, host+"/app:v1", "linux", "amd64"))
	reqs.Store(0)
	im, err = Pin(context.Background(), "web", host+"/app:v1", opt)
	if err != nil || im.Digest != now || reqs.Load() != 3 {
		t.Errorf("pin after a re-push = %v, %v after %d requests; want %s after 3", im, err, reqs.Load(), now)
	}

	// A digest reference: a HEAD says it exists, the cache says the rest.
	reqs.Store(0)
	if im, err = Pin(context.Background(), "web", host+"/app@"+now.String(), opt); err != nil || im.Digest != now || reqs.Load() != 1 {
		t.Errorf("pin by a cached digest = %v, %v after %d requests; want 1", im, err, reqs.Load())
	}
	reqs.Store(0)
	if _, err = Pin(context.Background(), "web", host+"/app@sha256:"+strings.Repeat("1", 64), opt); !errors.Is(err, ErrImageNotFound) {
		t.Errorf("pin by an unknown digest with a cache = %v, want ErrImageNotFound", err)
	}
}

// TestCacheWritesLater: put and markSeen return before the disk is
// written; the run reads what it put from memory, close writes it, and
// the next run reads it from disk. A cache that cannot be written is no
// cache, and no error.
func TestCacheWritesLater(t *testing.T) {
	b := []byte(`{"architecture":"amd64","os":"linux"}`)
	sum := sha256.Sum256(b)
	d := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	c := newBlobCache(dir, log)
	if err := c.put(d, b); err != nil {
		t.Fatal(err)
	}
	c.markSeen("app:v1")
	if got, ok := c.get(d); !ok || string(got) != string(b) {
		t.Errorf("get after put, same run = %q, %v", got, ok)
	}
	c.close()
	next := newBlobCache(dir, log)
	if got, ok := next.get(d); !ok || string(got) != string(b) || !next.seen("app:v1") {
		t.Errorf("next run: get = %q, %v; seen = %v; want the object and the tag", got, ok, next.seen("app:v1"))
	}
	if fi, err := os.Stat(filepath.Join(dir, "sha256", d.Hex)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cached file: %v, %v; want mode 0600", fi, err)
	}

	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := newBlobCache(notDir, log)
	if err := bad.put(d, b); err != nil {
		t.Errorf("put into an unwritable cache = %v, want nil (logged)", err)
	}
	bad.markSeen("app:v1")
	bad.close()
	if _, ok := newBlobCache(notDir, log).get(d); ok {
		t.Error("an unwritable cache returned an object from disk")
	}
}
