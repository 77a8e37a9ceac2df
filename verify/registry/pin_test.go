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
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// fastOptions retry quickly, so that failure tests stay fast.
func fastOptions() Options {
	return Options{Client: transport.New(transport.Policy{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})}
}

// memRegistry starts go-containerregistry's in-memory registry on loopback
// and returns its host:port.
func memRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(nopLogger())))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func pushImage(t testing.TB, ref string, os, arch string) v1.Image {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = os, arch
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(mustRef(t, ref), img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	return img
}

// pushIndex pushes an index of linux/amd64 and linux/arm64/v8 images and,
// with attest, a buildx-style attestation manifest (unknown/unknown).
func pushIndex(t testing.TB, ref string, attest bool) (v1.ImageIndex, []v1.Image) {
	t.Helper()
	var adds []mutate.IndexAddendum
	var imgs []v1.Image
	for _, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}} {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	if attest {
		att, err := random.Image(32, 1)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := imgs[0].Digest()
		adds = append(adds, mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{
			Platform:    &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest", "vnd.docker.reference.digest": d.String()},
		}})
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	if err := remote.WriteIndex(mustRef(t, ref), idx); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	return idx, imgs
}

func digestOf(t testing.TB, x interface{ Digest() (v1.Hash, error) }) manifest.Digest {
	t.Helper()
	h, err := x.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return manifest.MustParseDigest(h.String())
}

func configOf(t testing.TB, img v1.Image) manifest.Digest {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return manifest.MustParseDigest(h.String())
}

func TestPinSingleImage(t *testing.T) {
	host := memRegistry(t)
	img := pushImage(t, host+"/app:v1", "linux", "amd64")
	im, err := Pin(context.Background(), "web", host+"/app:v1", fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := manifest.Image{
		Name: "web", Ref: host + "/app:v1", Repository: host + "/app", Tag: "v1",
		Digest: digestOf(t, img), MediaType: string(types.DockerManifestSchema2),
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: digestOf(t, img), Config: configOf(t, img)}},
	}
	if fmt.Sprint(*im) != fmt.Sprint(want) {
		t.Errorf("Pin =\n%+v\nwant\n%+v", *im, want)
	}
	if got, w := Pinned(*im), host+"/app:v1@"+want.Digest.String(); got != w {
		t.Errorf("Pinned = %s, want %s", got, w)
	}
}

func TestPinIndex(t *testing.T) {
	host := memRegistry(t)
	for _, attest := range []bool{false, true} {
		ref := fmt.Sprintf("%s/app:attest-%v", host, attest)
		idx, imgs := pushIndex(t, ref, attest)
		im, err := Pin(context.Background(), "web", ref, fastOptions())
		if err != nil {
			t.Fatal(err)
		}
		if im.Digest != digestOf(t, idx) || im.Tag != "attest-"+fmt.Sprint(attest) || im.MediaType != string(types.OCIImageIndex) {
			t.Errorf("attest=%v: Pin = %s %s tag %q, want index %s", attest, im.MediaType, im.Digest, im.Tag, digestOf(t, idx))
		}
		want := []manifest.Platform{
			{OS: "linux", Architecture: "amd64", Digest: digestOf(t, imgs[0]), Config: configOf(t, imgs[0])},
			{OS: "linux", Architecture: "arm64", Variant: "v8", Digest: digestOf(t, imgs[1]), Config: configOf(t, imgs[1])},
		}
		if fmt.Sprint(im.Platforms) != fmt.Sprint(want) {
			t.Errorf("attest=%v: platforms =\n%v\nwant (attestation skipped)\n%v", attest, im.Platforms, want)
		}
		if im.Platforms[0].Config == im.Platforms[1].Config {
			t.Errorf("both platforms have config %s", im.Platforms[0].Config)
		}
	}
}

func TestPinPlatform(t *testing.T) {
	host := memRegistry(t)
	_, imgs := pushIndex(t, host+"/app:multi", true)
	pushImage(t, host+"/app:single", "linux", "amd64")
	tests := []struct {
		ref, platform string
		want          string // digest of the kept platform, "" for an error
	}{
		{"multi", "linux/amd64", digestOf(t, imgs[0]).String()},
		{"multi", "linux/arm64", digestOf(t, imgs[1]).String()},
		{"multi", "linux/arm64/v8", digestOf(t, imgs[1]).String()},
		{"multi", "linux/arm64/v7", ""},
		{"multi", "windows/amd64", ""},
		{"single", "linux/amd64", "single"},
		{"single", "linux/arm64", ""},
	}
	for _, tt := range tests {
		opt := fastOptions()
		opt.Platform = tt.platform
		im, err := Pin(context.Background(), "web", host+"/app:"+tt.ref, opt)
		if tt.want == "" {
			var pe *PlatformError
			if !errors.As(err, &pe) || pe.Want != tt.platform || len(pe.Available) == 0 {
				t.Errorf("Pin(%s, --platform %s) = %v, want a *PlatformError listing what there is", tt.ref, tt.platform, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Pin(%s, --platform %s): %v", tt.ref, tt.platform, err)
			continue
		}
		if len(im.Platforms) != 1 || (tt.want != "single" && im.Platforms[0].Digest.String() != tt.want) {
			t.Errorf("Pin(%s, --platform %s) platforms = %v, want only %s", tt.ref, tt.platform, im.Platforms, tt.want)
		}
	}
}

func TestPinAllOrderAndConcurrency(t *testing.T) {
	var inflight, peak atomic.Int64
	reg := registry.New(registry.Logger(nopLogger()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/") {
			time.Sleep(2 * time.Millisecond) // let requests overlap
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	var reqs []Request
	var want []manifest.Digest
	for i := range 40 {
		ref := fmt.Sprintf("%s/app:t%d", host, i)
		want = append(want, digestOf(t, pushImage(t, ref, "linux", "amd64")))
		reqs = append(reqs, Request{Name: fmt.Sprintf("r%d", i), Ref: ref})
	}
	peak.Store(0)
	opt := fastOptions()
	opt.Concurrency = 4
	ims, err := PinAll(context.Background(), reqs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, im := range ims {
		if im.Name != reqs[i].Name || im.Digest != want[i] {
			t.Errorf("PinAll[%d] = %s %s, want %s %s (input order)", i, im.Name, im.Digest, reqs[i].Name, want[i])
		}
	}
	if p := peak.Load(); p > 4 || p < 2 {
		t.Errorf("peak requests in flight = %d, want between 2 and Concurrency (4)", p)
	}
}

func TestPinByDigest(t *testing.T) {
	host := memRegistry(t)
	old := digestOf(t, pushImage(t, host+"/app:v1", "linux", "amd64"))
	tests := []struct {
		name, ref string
		check     func(*manifest.Image, error) string
	}{
		{"digest only", host + "/app@" + old.String(), func(im *manifest.Image, err error) string {
			if err != nil || im.Digest != old || im.Tag != "" {
				return fmt.Sprintf("got %v, %v; want %s without a tag", im, err, old)
			}
			return ""
		}},
		{"tag and digest, tag still there", host + "/app:v1@" + old.String(), func(im *manifest.Image, err error) string {
			if err != nil || im.Digest != old || im.Tag != "v1" {
				return fmt.Sprintf("got %v, %v; want %s tag v1", im, err, old)
			}
			return ""
		}},
		{"unknown digest", host + "/app@sha256:" + strings.Repeat("0", 64), func(im *manifest.Image, err error) string {
			if !errors.Is(err, ErrImageNotFound) {
				return fmt.Sprintf("got %v, want ErrImageNotFound", err)
			}
			return ""
		}},
	}
	for _, tt := range tests {
		im, err := Pin(context.Background(), "web", tt.ref, fastOptions())
		if msg := tt.check(im, err); msg != "" {
			t.Errorf("%s: Pin(%s): %s", tt.name, tt.ref, msg)
		}
	}

	// Re-push v1: the tag moved away from the pinned digest.
	now := digestOf(t, pushImage(t, host+"/app:v1", "linux", "amd64"))
	ref := host + "/app:v1@" + old.String()
	_, err := Pin(context.Background(), "web", ref, fastOptions())
	var me *MovedTagError
	if !errors.As(err, &me) || len(me.Tags) != 1 || me.Tags[0].Previous != old || me.Tags[0].Current != now {
		t.Fatalf("Pin(%s) after a re-push = %v, want a *MovedTagError %s -> %s", ref, err, old, now)
	}
	if !verdict.IsMismatch(err) {
		t.Errorf("a *MovedTagError must unwrap to a *verdict.MismatchError: %v", err)
	}
	opt := fastOptions()
	opt.AllowMoved = []string{"web"}
	im, err := Pin(context.Background(), "web", ref, opt)
	if err != nil || im.Digest != old {
		t.Errorf("Pin(%s) with the move allowed = %v, %v; want the pinned digest %s", ref, im, err, old)
	}
}

func TestPinMovedTag(t *testing.T) {
	host := memRegistry(t)
	pushIndex(t, host+"/app:v1", false)
	pushImage(t, host+"/side:v1", "linux", "amd64")
	reqs := []Request{{Name: "web", Ref: host + "/app:v1"}, {Name: "side", Ref: host + "/side:v1"}}
	first, err := PinAll(context.Background(), reqs, fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	prev := &manifest.Manifest{Images: first}

	// Unchanged: no moved tag.
	opt := fastOptions()
	opt.Previous = prev
	if _, err := PinAll(context.Background(), reqs, opt); err != nil {
		t.Fatalf("second pin, nothing re-pushed: %v", err)
	}

	newIdx, _ := pushIndex(t, host+"/app:v1", false) // the re-push
	second, err := PinAll(context.Background(), reqs, opt)
	var me *MovedTagError
	if !errors.As(err, &me) {
		t.Fatalf("pin after a re-push = %v, want a *MovedTagError", err)
	}
	if len(me.Tags) != 1 || me.Tags[0].Name != "web" || me.Tags[0].Previous != first[0].Digest || me.Tags[0].Current != digestOf(t, newIdx) {
		t.Errorf("moved = %+v, want web %s -> %s", me.Tags, first[0].Digest, digestOf(t, newIdx))
	}
	for _, s := range []string{"web", first[0].Digest.String(), digestOf(t, newIdx).String()} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	if len(second) != 2 || second[0].Digest != digestOf(t, newIdx) {
		t.Errorf("PinAll returned %v with its *MovedTagError, want the complete new pin", second)
	}

	for _, allow := range []string{"web", host + "/app:v1", host + "/app"} {
		opt.AllowMoved = []string{allow}
		_, err := PinAll(context.Background(), reqs, opt)
		wantOK := allow != host+"/app" // names app:latest, not app:v1
		if (err == nil) != wantOK {
			t.Errorf("--allow-moved-tag %s: err = %v, want accepted %v", allow, err, wantOK)
		}
	}
	moved := Moved(prev, second, []string{"web"})
	if len(moved) != 1 || !moved[0].Allowed {
		t.Errorf("Moved(allow web) = %+v, want one allowed", moved)
	}
	opt.AllowMoved = []string{"web"}
	res, err := Resolve(context.Background(), reqs, opt)
	if err != nil || len(res.Moved) != 1 || !res.Moved[0].Allowed || len(res.Images) != 2 {
		t.Errorf("Resolve(allow web) = %+v, %v; want both images and web's move, allowed", res, err)
	}
	// Known pins (e.g. in files to rewrite) count as before.
	known := fastOptions()
	known.Known = []string{host + "/app:v1@" + first[0].Digest.String(), host + "/side@" + first[1].Digest.String()}
	if _, err := PinAll(context.Background(), reqs, known); !errors.As(err, &me) || len(me.Tags) != 1 || me.Tags[0].Name != "web" {
		t.Errorf("PinAll with a Known pin of the old digest = %v, want web moved", err)
	}
}

func TestMovedMatching(t *testing.T) {
	d1 := manifest.SHA256([]byte("1"))
	d2 := manifest.SHA256([]byte("2"))
	prev := &manifest.Manifest{Images: []manifest.Image{
		{Name: "web", Repository: "index.docker.io/library/nginx", Tag: "1.27", Digest: d1},
		{Name: "api", Repository: "127.0.0.1:5000/api", Tag: "v1", Digest: d1},
		{Name: "db", Repository: "127.0.0.1:5000/db", Digest: d1},
	}}
	tests := []struct {
		name string
		now  manifest.Image
		want int
	}{
		{"same digest", manifest.Image{Name: "web", Repository: "index.docker.io/library/nginx", Tag: "1.27", Digest: d1}, 0},
		{"moved", manifest.Image{Name: "web", Repository: "index.docker.io/library/nginx", Tag: "1.27", Digest: d2}, 1},
		{"moved, another role", manifest.Image{Name: "proxy", Repository: "index.docker.io/library/nginx", Tag: "1.27", Digest: d2}, 1},
		{"another tag", manifest.Image{Name: "web", Repository: "index.docker.io/library/nginx", Tag: "1.28", Digest: d2}, 0},
		{"digest only", manifest.Image{Name: "db", Repository: "127.0.0.1:5000/db", Digest: d2}, 0},
	}
	for _, tt := range tests {
		if got := Moved(prev, []manifest.Image{tt.now}, nil); len(got) != tt.want {
			t.Errorf("%s: Moved = %+v, want %d", tt.name, got, tt.want)
		}
	}
	if got := Moved(nil, prev.Images, nil); got != nil {
		t.Errorf("Moved(nil previous) = %v, want nothing", got)
	}
	m := MovedTag{Name: "web", Ref: "nginx:1.27", Repository: "index.docker.io/library/nginx", Tag: "1.27"}
	for s, want := range map[string]bool{"web": true, "nginx:1.27": true, "docker.io/library/nginx:1.27": true, "nginx": false, "api": false, "nginx:1.28": false} {
		if m.Matches(s) != want {
			t.Errorf("Matches(%q) = %v, want %v", s, !want, want)
		}
	}
}

func TestPinnedAndTagKey(t *testing.T) {
	d := manifest.SHA256([]byte("x"))
	tests := []struct{ ref, pinned, key string }{
		{"nginx", "nginx:latest@" + d.String(), "index.docker.io/library/nginx:latest"},
		{"nginx:1.27", "nginx:1.27@" + d.String(), "index.docker.io/library/nginx:1.27"},
		{"docker.io/library/nginx:1.27", "docker.io/library/nginx:1.27@" + d.String(), "index.docker.io/library/nginx:1.27"},
		{"127.0.0.1:5000/app:v1@" + manifest.SHA256([]byte("y")).String(), "127.0.0.1:5000/app:v1@" + d.String(), "127.0.0.1:5000/app:v1"},
		{"127.0.0.1:5000/app@" + d.String(), "127.0.0.1:5000/app@" + d.String(), ""},
		{"localhost:5000/a/b", "localhost:5000/a/b:latest@" + d.String(), "localhost:5000/a/b:latest"},
	}
	for _, tt := range tests {
		if got := Pinned(manifest.Image{Ref: tt.ref, Digest: d}); got != tt.pinned {
			t.Errorf("Pinned(%s) = %s, want %s", tt.ref, got, tt.pinned)
		}
		if got, _ := TagKey(tt.ref); got != tt.key {
			t.Errorf("TagKey(%s) = %q, want %q", tt.ref, got, tt.key)
		}
	}
}
