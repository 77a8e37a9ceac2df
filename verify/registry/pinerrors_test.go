package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verdict"
)

func TestPinErrors(t *testing.T) {
	host := memRegistry(t)
	pushImage(t, host+"/app:v1", "linux", "amd64")
	fail := func(status int, header string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if header != "" {
				w.Header().Set("WWW-Authenticate", header)
			}
			w.WriteHeader(status)
		}))
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	down := func() string {
		srv := httptest.NewServer(http.NotFoundHandler())
		h := strings.TrimPrefix(srv.URL, "http://")
		srv.Close()
		return h
	}
	notFound := func(err error) bool { return errors.Is(err, ErrImageNotFound) }
	unavailable := verdict.IsUnavailable
	badRef := func(err error) bool { var re *ReferenceError; return errors.As(err, &re) }
	tests := []struct {
		name, ref string
		platform  string
		want      func(error) bool
	}{
		{"missing tag", host + "/app:v2", "", notFound},
		{"missing repository", host + "/nope:v1", "", notFound},
		{"registry 500", fail(500, "") + "/app:v1", "", unavailable},
		{"registry 503", fail(503, "") + "/app:v1", "", unavailable},
		{"registry 401", fail(401, `Basic realm="x"`) + "/app:v1", "", unavailable},
		{"registry 403", fail(403, "") + "/app:v1", "", unavailable},
		{"registry down", down() + "/app:v1", "", unavailable},
		{"empty", "", "", badRef},
		{"space", " " + host + "/app:v1", "", badRef},
		{"upper-case repository", host + "/App:v1", "", badRef},
		{"bad tag", host + "/app:v1!", "", badRef},
		{"short digest", host + "/app@sha256:abc", "", badRef},
		{"upper-case digest", host + "/app@sha256:" + strings.Repeat("A", 64), "", badRef},
		{"unknown algorithm", host + "/app@md5:" + strings.Repeat("a", 32), "", badRef},
		{"sha512 digest", host + "/app@sha512:" + strings.Repeat("a", 128), "", badRef},
		{"two digests", host + "/app@sha256:" + strings.Repeat("a", 64) + "@sha256:" + strings.Repeat("a", 64), "", badRef},
		{"bad platform", host + "/app:v1", "linux", badRef},
		{"bad platform parts", host + "/app:v1", "linux/amd64/v8/x", badRef},
		{"empty platform part", host + "/app:v1", "linux//v8", badRef},
	}
	for _, tt := range tests {
		opt := fastOptions()
		opt.Platform = tt.platform
		_, err := Pin(context.Background(), "web", tt.ref, opt)
		if !tt.want(err) {
			t.Errorf("%s: Pin(%q, platform %q) = %v (%T), not the error wanted", tt.name, tt.ref, tt.platform, err, err)
		}
	}
}

func TestPinAllReportsEveryFailure(t *testing.T) {
	host := memRegistry(t)
	pushImage(t, host+"/app:v1", "linux", "amd64")
	_, err := PinAll(context.Background(), []Request{{Ref: host + "/app:v1"}, {Ref: host + "/app:v2"}, {Ref: host + "/app:v3"}}, fastOptions())
	for _, s := range []string{"app:v2", "app:v3"} {
		if !strings.Contains(fmt.Sprint(err), s) {
			t.Errorf("PinAll error %v does not name %s", err, s)
		}
	}
	// Bad references are all reported, before any request.
	_, err = PinAll(context.Background(), []Request{{Ref: "A"}, {Ref: "b@sha256:x"}}, fastOptions())
	if n := strings.Count(fmt.Sprint(err), "invalid image reference"); n != 2 {
		t.Errorf("PinAll of two bad references reported %d: %v", n, err)
	}
}

func TestPinRetriesUnderPolicy(t *testing.T) {
	reg := registry.New(registry.Logger(nopLogger()))
	var fails atomic.Int64
	var manifests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodGet {
			manifests.Add(1)
			if fails.Add(-1) >= 0 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	pushImage(t, host+"/app:v1", "linux", "amd64")
	manifests.Store(0)
	fails.Store(2)
	if _, err := Pin(context.Background(), "web", host+"/app:v1", fastOptions()); err != nil {
		t.Fatalf("Pin through two 503s: %v", err)
	}
	if n := manifests.Load(); n != 3 {
		t.Errorf("manifest GETs = %d, want 3 (two 503s retried)", n)
	}
	// One attempt only: the 503 is the answer.
	fails.Store(1)
	opt := Options{Client: transport.New(transport.Policy{MaxAttempts: 1})}
	if _, err := Pin(context.Background(), "web", host+"/app:v1", opt); !verdict.IsUnavailable(err) {
		t.Errorf("Pin with MaxAttempts 1 through a 503 = %v, want unavailable", err)
	}
}

func TestPinUsesTheTransport(t *testing.T) {
	host := memRegistry(t)
	pushImage(t, host+"/app:v1", "linux", "amd64")
	client := transport.New(transport.Policy{UserAgent: "lockstep-test"})
	if _, err := Pin(context.Background(), "web", host+"/app:v1", Options{Client: client}); err != nil {
		t.Fatal(err)
	}
	// A ping, the manifest, the config: every one through the client.
	if n := client.Stats().Requests; n < 3 {
		t.Errorf("the transport client saw %d requests, want every request (at least 3)", n)
	}
}

func TestPinAllStopsWhenTheRegistryIsDown(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			hits.Add(1)
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	var reqs []Request
	for i := range 200 {
		reqs = append(reqs, Request{Ref: fmt.Sprintf("%s/app:t%d", host, i)})
	}
	opt := fastOptions()
	opt.Concurrency = 2
	_, err := PinAll(context.Background(), reqs, opt)
	if !verdict.IsUnavailable(err) {
		t.Fatalf("PinAll against a failing registry = %v, want unavailable", err)
	}
	if n := hits.Load(); n > 10 {
		t.Errorf("%d requests after the registry failed, want the rest stopped", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PinAll(ctx, reqs[:1], opt); !errors.Is(err, context.Canceled) {
		t.Errorf("PinAll with a cancelled context = %v, want context.Canceled", err)
	}
}
