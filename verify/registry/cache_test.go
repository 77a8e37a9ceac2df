package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
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
	if len(files) != 3 {
		t.Fatalf("cache holds %d objects, want 3 (a config, two platform manifests)", len(files))
	}
	for _, f := range files {
		os.WriteFile(f, []byte(`{"os":"plan9"}`), 0o644)
	}
	reqs.Store(0)
	im, err := Pin(context.Background(), "web", host+"/app:v1", opt)
	if err != nil || im.Platforms[0].OS != "linux" || reqs.Load() != 2 {
		t.Errorf("pin over a damaged cache = %+v, %v after %d requests; want linux after 2", im, err, reqs.Load())
	}
}
