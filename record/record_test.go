package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// testRegistry starts go-containerregistry's in-memory registry and
// returns its host:port.
func testRegistry(t testing.TB) string {
	t.Helper()
	r := memregistry.Start()
	t.Cleanup(r.Close)
	return r.Host
}

func pushImage(t testing.TB, ref string) v1.Image {
	t.Helper()
	img, err := memregistry.PushImage(ref, 256)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func pushIndex(t testing.TB, ref string) v1.ImageIndex {
	t.Helper()
	idx, err := memregistry.PushIndex(ref, "linux/amd64", "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func assetDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range map[string]string{"index.html": "<html>", "assets/app-1a2b.js": "js"} {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestManifest(t *testing.T) {
	host := testRegistry(t)
	img := pushImage(t, host+"/store/web:v1")
	idx := pushIndex(t, host+"/store/api:v3")
	imgDigest, _ := img.Digest()
	idxDigest, _ := idx.Digest()
	now := time.Date(2021, 4, 5, 12, 0, 0, 500, time.FixedZone("CEST", 7200))
	m, err := Manifest(context.Background(), Options{
		Release:    "store-web",
		Generation: 3,
		Images: []Image{
			{Name: "web", Ref: host + "/store/web:v1"},
			{Name: "api", Ref: host + "/store/api@" + idxDigest.String()},
		},
		Assets:    assets.Options{Dir: assetDir(t)},
		CDN:       []string{"https://cdn.example/store/"},
		Origin:    "https://origin.example/store/",
		ExpiresIn: 24 * time.Hour,
		Now:       func() time.Time { return now },
		Getenv: env(map[string]string{"GITHUB_REPOSITORY": "acme/store", "GITHUB_SHA": "abc123", "GITHUB_REF": "refs/heads/main",
			"GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "42"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Release.Name != "store-web" || m.Release.Generation != 3 {
		t.Errorf("release = %s@%d, want store-web@3", m.Release.Name, m.Release.Generation)
	}
	if want := time.Date(2021, 4, 5, 10, 0, 0, 0, time.UTC); !m.Release.CreatedAt.Equal(want) || m.Release.CreatedAt.Location() != time.UTC {
		t.Errorf("createdAt = %v, want %v (UTC, whole seconds)", m.Release.CreatedAt, want)
	}
	if m.Release.ExpiresAt == nil || !m.Release.ExpiresAt.Equal(m.Release.CreatedAt.Add(24*time.Hour)) {
		t.Errorf("expiresAt = %v, want createdAt + 24h", m.Release.ExpiresAt)
	}
	wantSrc := manifest.BuildSource{Repository: "https://github.com/acme/store", Commit: "abc123", Ref: "refs/heads/main",
		WorkflowRunURL: "https://github.com/acme/store/actions/runs/42"}
	if m.Release.Source == nil || *m.Release.Source != wantSrc {
		t.Errorf("source = %+v, want %+v", m.Release.Source, wantSrc)
	}
	if len(m.Images) != 2 || m.Images[0].Name != "api" || m.Images[1].Name != "web" {
		t.Fatalf("images = %+v, want api and web, sorted by name", m.Images)
	}
	api, web := m.Images[0], m.Images[1]
	if api.Digest.String() != idxDigest.String() || len(api.Platforms) != 2 || api.Tag != "" {
		t.Errorf("api (pinned by digest) = %s with %d platforms, tag %q; want %s with 2 platforms", api.Digest, len(api.Platforms), api.Tag, idxDigest)
	}
	for _, p := range api.Platforms {
		if p.Config.IsZero() || p.Digest.IsZero() {
			t.Errorf("api platform %s lacks a digest or config: %+v", p, p)
		}
	}
	cfg, _ := img.ConfigName()
	if web.Digest.String() != imgDigest.String() || web.Tag != "v1" || len(web.Platforms) != 1 || web.Platforms[0].Config.String() != cfg.String() {
		t.Errorf("web = %+v, want digest %s, tag v1, one platform with config %s", web, imgDigest, cfg)
	}
	if got := len(m.Assets.Files); got != 2 || m.Assets.Files[0].Path != "assets/app-1a2b.js" {
		t.Errorf("assets = %+v, want assets/app-1a2b.js and index.html", m.Assets.Files)
	}
	if m.Assets.Fingerprint != manifest.Fingerprint(m.Assets.Files) || m.Assets.Origin != "https://origin.example/store/" {
		t.Errorf("assets fingerprint %s origin %q", m.Assets.Fingerprint, m.Assets.Origin)
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Parse(b); err != nil {
		t.Errorf("Parse(the recorded manifest) = %v", err)
	}
}

func TestManifestImagesOnly(t *testing.T) {
	host := testRegistry(t)
	pushImage(t, host+"/store/web:v1")
	m, err := Manifest(context.Background(), Options{Release: "web", Generation: 1, Images: []Image{{"web", host + "/store/web:v1"}}, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if m.Release.Source != nil || len(m.Assets.Files) != 0 {
		t.Errorf("source %+v, files %d: want none outside Actions and without assets", m.Release.Source, len(m.Assets.Files))
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Parse(b); err != nil {
		t.Errorf("Parse(an images-only manifest) = %v\n%s", err, b)
	}
}

func TestManifestRefuses(t *testing.T) {
	host := testRegistry(t)
	pushImage(t, host+"/store/web:v1")
	dir := assetDir(t)
	downHost := testenv.RefusedAddr(t)
	base := func() Options {
		return Options{Release: "store-web", Generation: 1, Images: []Image{{"web", host + "/store/web:v1"}},
			Assets: assets.Options{Dir: dir}, CDN: []string{"https://cdn.example/"}, Getenv: env(nil)}
	}
	tests := []struct {
		name   string
		change func(o *Options)
		field  string // for a *manifest.ValidationError
		kind   string // or: "input" (exit 2), "unverified" (exit 3), "asset"
	}{
		{"bad release name", func(o *Options) { o.Release = "Store Web" }, "release.name", ""},
		{"generation 0", func(o *Options) { o.Generation = 0 }, "release.generation", ""},
		{"nothing to record", func(o *Options) { o.Images, o.Assets.Dir = nil, "" }, "", ""},
		{"assets without a CDN", func(o *Options) { o.CDN = nil }, "assets.cdn", ""},
		{"a CDN that is not a URL", func(o *Options) { o.CDN = []string{"cdn.example"} }, "assets.cdn[0]", ""},
		{"the origin is the CDN", func(o *Options) { o.Origin = "https://cdn.example" }, "assets.origin", ""},
		{"an image name twice", func(o *Options) { o.Images = append(o.Images, o.Images[0]) }, "images.web", ""},
		{"an expiry in the past", func(o *Options) { o.ExpiresIn = -time.Hour }, "release.expiresAt", ""},
		{"an unparseable reference", func(o *Options) { o.Images[0].Ref = "UPPER/case:x y" }, "", "input"},
		{"a registry that is down", func(o *Options) { o.Images[0].Ref = downHost + "/store/web:v1" }, "", "unverified"},
		// verify/registry decides whether a missing tag is invalid input or
		// a could-not-verify; either way it is no refusal.
		{"a tag that does not exist", func(o *Options) { o.Images[0].Ref = host + "/store/web:nope" }, "", "input|unverified"},
		{"a missing asset directory", func(o *Options) { o.Assets.Dir = filepath.Join(dir, "nope") }, "", "asset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base()
			tt.change(&o)
			m, err := Manifest(context.Background(), o)
			if err == nil {
				t.Fatalf("Manifest = %+v, want an error", m)
			}
			var ve *manifest.ValidationError
			var ae *assets.Error
			got := "unverified"
			switch {
			case errors.As(err, &ae):
				got = "asset"
			case errors.As(err, &ve) && tt.kind == "":
				if ve.Field != tt.field {
					t.Errorf("Manifest = %v, want a *manifest.ValidationError naming %q", err, tt.field)
				}
				return
			case isInputError(err):
				got = "input"
			}
			if !slices.Contains(strings.Split(tt.kind, "|"), got) {
				t.Errorf("Manifest = %v (%T): a %s error, want %s", err, err, got, tt.kind)
			}
			if tt.kind != "asset" && !strings.Contains(err.Error(), "image web") {
				t.Errorf("Manifest = %v, want it to name the image", err)
			}
		})
	}
}

// isInputError reports whether err says the input is wrong (exit 2): a
// *manifest.ValidationError, or an error with InvalidInput() true, as
// verify/registry's reference errors have.
func isInputError(err error) bool {
	var ve *manifest.ValidationError
	var in interface{ InvalidInput() bool }
	return errors.As(err, &ve) || errors.As(err, &in) && in.InvalidInput()
}

func TestParseImage(t *testing.T) {
	if im, err := ParseImage(" web = reg.example/a/b:v1@sha256:" + strings.Repeat("a", 64)); err != nil || im.Name != "web" || !strings.HasPrefix(im.Ref, "reg.example/a/b:v1@") {
		t.Errorf("ParseImage = %+v, %v", im, err)
	}
	for _, s := range []string{"web", "=ref", "web=", ""} {
		if _, err := ParseImage(s); !errors.As(err, new(*manifest.ValidationError)) {
			t.Errorf("ParseImage(%q) = %v, want a *manifest.ValidationError", s, err)
		}
	}
}

func TestSourceFromEnv(t *testing.T) {
	tests := []struct {
		vars map[string]string
		want *manifest.BuildSource
	}{
		{nil, nil},
		{map[string]string{"GITHUB_SHA": "abc"}, &manifest.BuildSource{Commit: "abc"}},
		{map[string]string{"GITHUB_REPOSITORY": "acme/web", "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_SERVER_URL": "https://ghe.example/"},
			&manifest.BuildSource{Repository: "https://ghe.example/acme/web", WorkflowRunURL: "https://ghe.example/acme/web/actions/runs/7/attempts/2"}},
	}
	for _, tt := range tests {
		got := SourceFromEnv(env(tt.vars))
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("SourceFromEnv(%v) = %+v, want %+v", tt.vars, got, tt.want)
		}
	}
}

// TestManifestAssetGraph: record on a real Vite build records the graph
// (apiVersion v2, the page's closure every file a browser loads), and
// NoGraph records none (v1, which older gates read).
func TestManifestAssetGraph(t *testing.T) {
	dir := filepath.Join("..", "testdata", "web", "vite-react", "dist")
	opts := Options{Release: "web", Generation: 1, CDN: []string{"https://cdn.example/app/"}, Getenv: env(nil),
		Assets: assets.Options{Dir: dir, Lists: []string{filepath.Join(dir, ".vite", "manifest.json")}}}
	m, err := Manifest(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != manifest.APIVersionV2 {
		t.Errorf("apiVersion = %s, want %s", m.APIVersion, manifest.APIVersionV2)
	}
	closure := m.Assets.Closure([]string{"index.html"})
	if len(closure) != len(m.Assets.Files)-1 || slices.Contains(closure, "robots.txt") {
		t.Errorf("closure of index.html = %q, want every file but robots.txt", closure)
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Parse(b); err != nil {
		t.Errorf("Parse(the recorded v2 manifest) = %v", err)
	}

	opts.NoGraph = true
	m1, err := Manifest(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if m1.APIVersion != manifest.APIVersion {
		t.Errorf("NoGraph: apiVersion = %s, want %s", m1.APIVersion, manifest.APIVersion)
	}
	for _, f := range m1.Assets.Files {
		if len(f.Loads) > 0 {
			t.Errorf("NoGraph: %s loads %q", f.Path, f.Loads)
		}
	}
	if m1.Assets.Fingerprint != m.Assets.Fingerprint {
		t.Errorf("the graph changed the assets' fingerprint")
	}
}
