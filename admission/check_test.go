package admission_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	webassets "github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

func dg(c string) manifest.Digest { return manifest.MustParseDigest("sha256:" + strings.Repeat(c, 64)) }

// The web image: an index with linux/amd64 and linux/arm64.
var (
	index     = dg("1")
	amd64     = dg("2")
	amd64Conf = dg("3")
	arm64     = dg("4")
	arm64Conf = dg("5")
	stranger  = dg("9")
)

func webImage() manifest.Image {
	return manifest.Image{
		Name: "web", Ref: "127.0.0.1:5000/web:v1", Repository: "127.0.0.1:5000/web", Tag: "v1", Digest: index,
		MediaType: "application/vnd.oci.image.index.v1+json",
		Platforms: []manifest.Platform{
			{OS: "linux", Architecture: "amd64", Digest: amd64, Config: amd64Conf},
			{OS: "linux", Architecture: "arm64", Variant: "v8", Digest: arm64, Config: arm64Conf},
		},
	}
}

// fixture is a release: its manifest on disk, its assets on a CDN, and an
// app whose page references some of them.
type fixture struct {
	m        *manifest.Manifest
	path     string
	cdn      *httptest.Server
	app      *httptest.Server
	page     string
	cdnFiles map[string]string
	raw      string // replaces the manifest file when set
	// pageType is the page's Content-Type ("text/html" when empty);
	// appFiles are other paths the app serves itself (its own assets),
	// typed by their extension; another path under /static/ is a 404.
	pageType string
	appFiles map[string]string
	mu       sync.Mutex
	cdnHits  int
	appHits  map[string]int
}

func newFixture(t *testing.T, assets map[string]string, page string) *fixture {
	t.Helper()
	fx := &fixture{cdnFiles: map[string]string{}, page: page}
	fx.cdn = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fx.mu.Lock()
		fx.cdnHits++
		body, ok := fx.cdnFiles[strings.TrimPrefix(r.URL.Path, "/static/")]
		fx.mu.Unlock()
		if r.URL.Path == "/static/loop.js" {
			w.Header().Add("CDN-Loop", "edge, lockstep")
			w.Header().Add("CDN-Loop", "lockstep")
		}
		if !ok {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method != http.MethodHead {
			w.Write([]byte(body))
		}
	}))
	t.Cleanup(fx.cdn.Close)
	fx.app = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fx.mu.Lock()
		if fx.appHits == nil {
			fx.appHits = map[string]int{}
		}
		fx.appHits[r.URL.Path]++
		body, own := fx.appFiles[r.URL.Path]
		p, ct := strings.ReplaceAll(fx.page, "CDN", fx.cdn.URL+"/static"), cmp.Or(fx.pageType, "text/html")
		fx.mu.Unlock()
		if !own && strings.HasPrefix(r.URL.Path, "/static/") {
			http.NotFound(w, r)
			return
		}
		if own {
			w.Header().Set("Content-Type", webassets.ContentType(r.URL.Path))
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			if r.Method != http.MethodHead {
				w.Write([]byte(body))
			}
			return
		}
		w.Header().Set("Content-Type", ct)
		w.Write([]byte(p))
	}))
	t.Cleanup(fx.app.Close)
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "store-web", Generation: 7, CreatedAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second)},
		Images:  []manifest.Image{webImage()},
		Assets:  manifest.Assets{CDN: []string{fx.cdn.URL + "/static/"}},
	}
	for p, body := range assets {
		m.Assets.Files = append(m.Assets.Files, manifest.File{Path: p, Size: int64(len(body)), SHA256: manifest.SHA256([]byte(body)).Hex})
		fx.cdnFiles[p] = body
	}
	sort.Slice(m.Assets.Files, func(i, j int) bool { return m.Assets.Files[i].Path < m.Assets.Files[j].Path })
	m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
	fx.m = m
	fx.path = filepath.Join(t.TempDir(), "manifest.json")
	fx.write(t)
	return fx
}

func (fx *fixture) write(t *testing.T) {
	t.Helper()
	fx.m.APIVersion = fx.m.Version() // v2 once a file has loads
	raw, err := fx.m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if fx.raw != "" {
		raw = []byte(fx.raw)
	}
	if err := os.WriteFile(fx.path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (fx *fixture) config(runningDigest string) admission.Config {
	return admission.Config{
		CDN:           cdngate.Checker{},
		Source:        manifest.FileSource{Path: fx.path},
		AllowUnsigned: true,
		Image:         "web",
		Running:       running.Given{Value: runningDigest},
		Platform:      "linux/amd64",
		Probes:        []string{fx.app.URL + "/"},
		Client:        transport.New(transport.Policy{MaxAttempts: 2, BaseDelay: time.Millisecond}),
		Timeout:       10 * time.Second,
		Rand:          rand.New(rand.NewPCG(1, 2)),
	}
}

var v1Assets = map[string]string{
	"js/app.1111.js":    "console.log('v1')",
	"css/site.2222.css": "body{}",
	"img/logo.svg":      "<svg/>",
	"js/vendor.3333.js": "/* vendor */",
}

const v1Page = `<!doctype html><link rel=stylesheet href="CDN/css/site.2222.css"><script src="CDN/js/app.1111.js"></script><img src="CDN/img/logo.svg">`

// kinds lists the kinds of the findings of d with the given severity.
func kinds(d admission.Decision, sev admission.Severity) []admission.Kind {
	var out []admission.Kind
	for _, f := range d.Findings {
		if f.Severity == sev && !slices.Contains(out, f.Kind) {
			out = append(out, f.Kind)
		}
	}
	slices.Sort(out)
	return out
}

func TestCheck(t *testing.T) {
	const (
		newPage    = `<script src="CDN/js/app.9999.js"></script><link rel=stylesheet href="CDN/css/site.2222.css">`
		brokenPage = `<script src="CDN/js/vendor.3333.js"></script>`
	)
	tests := []struct {
		name       string
		running    string
		page       string
		edit       func(fx *fixture, c *admission.Config)
		want       []admission.Kind // refusing kinds
		warn       []admission.Kind
		unverified bool
		// maxWait, when set, bounds Decision.Waited: a final refusal waits
		// for nothing.
		maxWait time.Duration
		match   string
	}{
		{name: "good instance, config digest", running: amd64Conf.String(), match: "config"},
		{name: "index digest", running: index.String(), match: "index"},
		{name: "platform manifest digest", running: amd64.String(), match: "manifest"},
		{name: "arm64 digest on an amd64 gate", running: arm64Conf.String(), want: []admission.Kind{admission.KindImageDigestMismatch}},
		{name: "arm64 manifest on an amd64 gate", running: arm64.String(), want: []admission.Kind{admission.KindImageDigestMismatch}},
		{name: "arm64 gate", running: arm64Conf.String(), match: "config", edit: func(fx *fixture, c *admission.Config) { c.Platform = "linux/arm64" }},
		{name: "re-pushed digest", running: stranger.String(), want: []admission.Kind{admission.KindImageDigestMismatch}},
		{name: "tag only", running: "127.0.0.1:5000/web:v1", want: []admission.Kind{admission.KindImageNotPinned}},
		{name: "malformed digest", running: "sha256:ABC", want: []admission.Kind{admission.KindImageNotPinned}},
		{name: "new asset, not in the manifest nor on the CDN", running: stranger.String(), page: newPage,
			want: []admission.Kind{admission.KindAssetMissingOnCDN, admission.KindAssetNotInManifest, admission.KindImageDigestMismatch}},
		{name: "asset gone from the CDN", running: amd64Conf.String(), page: brokenPage,
			edit: func(fx *fixture, c *admission.Config) { delete(fx.cdnFiles, "js/vendor.3333.js") },
			want: []admission.Kind{admission.KindAssetMissingOnCDN}},
		{name: "asset with other bytes on the CDN", running: amd64Conf.String(), page: brokenPage,
			edit: func(fx *fixture, c *admission.Config) { fx.cdnFiles["js/vendor.3333.js"] = "tampered, longer" },
			want: []admission.Kind{admission.KindAssetContentMismatch}},
		{name: "no CDN checker fails closed", running: amd64Conf.String(), page: brokenPage,
			edit:       func(fx *fixture, c *admission.Config) { c.CDN = nil },
			want:       []admission.Kind{admission.KindDependencyUnreachable},
			unverified: true},
		{name: "CDN loop", running: amd64Conf.String(), page: `<script src="CDN/loop.js"></script>`,
			edit: func(fx *fixture, c *admission.Config) {
				fx.cdnFiles["loop.js"] = "x"
				fx.m.Assets.Files = append(fx.m.Assets.Files, manifest.File{Path: "loop.js", Size: 1, SHA256: manifest.SHA256([]byte("x")).Hex})
				sort.Slice(fx.m.Assets.Files, func(i, j int) bool { return fx.m.Assets.Files[i].Path < fx.m.Assets.Files[j].Path })
				fx.m.Assets.Fingerprint = manifest.Fingerprint(fx.m.Assets.Files)
			},
			want: []admission.Kind{admission.KindCDNLoop}},
		{name: "foreign script refused", running: amd64Conf.String(), page: v1Page + `<script src="https://tracker.example.net/t.js"></script>`,
			want: []admission.Kind{admission.KindAssetForeignHost}},
		{name: "allowed foreign host", running: amd64Conf.String(), page: v1Page + `<script src="https://tracker.example.net/t.js"></script><link rel=stylesheet href="https://fonts.example.com/f.css">`,
			edit: func(fx *fixture, c *admission.Config) {
				c.AllowHosts = []string{"TRACKER.example.net", "*.example.com"}
			},
			warn: []admission.Kind{admission.KindManifestUnsigned}},
		{name: "a wildcard does not allow a look-alike suffix", running: amd64Conf.String(), page: v1Page + `<script src="https://fonts.example.com.evil.org/f.js"></script>`,
			edit: func(fx *fixture, c *admission.Config) { c.AllowHosts = []string{"*.example.com"} },
			want: []admission.Kind{admission.KindAssetForeignHost}},
		{name: "a wildcard does not allow a look-alike name", running: amd64Conf.String(), page: v1Page + `<script src="https://evilexample.com/g.js"></script>`,
			edit: func(fx *fixture, c *admission.Config) { c.AllowHosts = []string{"*.example.com"} },
			want: []admission.Kind{admission.KindAssetForeignHost}},
		{name: "allowed host by port only", running: amd64Conf.String(), page: `<script src="https://tracker.example.net:8443/t.js"></script>`,
			edit: func(fx *fixture, c *admission.Config) { c.AllowHosts = []string{"tracker.example.net:443"} },
			want: []admission.Kind{admission.KindAssetForeignHost}},
		{name: "all assets moved to an unknown host", running: amd64Conf.String(), page: `<script src="https://cdn2.example.org/static/js/app.1111.js"></script>`,
			want: []admission.Kind{admission.KindAssetForeignHost}},
		{name: "a JSON probe in an unknown shape is a refusal, not could-not-check", running: amd64Conf.String(), page: `{"version": 3, "chunks": {}}`,
			edit: func(fx *fixture, c *admission.Config) { fx.pageType = "application/json" },
			want: []admission.Kind{admission.KindProbeUnreadable}},
		{name: "JSON served as JSON that does not parse", running: amd64Conf.String(), page: `{"index.html": {"file": "as`,
			edit: func(fx *fixture, c *admission.Config) { fx.pageType = "application/json; charset=utf-8" },
			want: []admission.Kind{admission.KindProbeUnreadable}},
		{name: "a Vite manifest as the probe", running: amd64Conf.String(),
			page: `{"index.html": {"file": "js/app.1111.js", "css": ["css/site.2222.css"], "assets": ["img/logo.svg"], "isEntry": true}}`,
			edit: func(fx *fixture, c *admission.Config) { fx.pageType = "application/json" }},
		{name: "a webpack manifest naming a file the manifest lacks", running: amd64Conf.String(),
			page: `{"main.js": "CDN/js/app.1111.js", "lazy.js": "CDN/js/lazy.4444.js"}`,
			edit: func(fx *fixture, c *admission.Config) { fx.pageType = "application/json" },
			want: []admission.Kind{admission.KindAssetMissingOnCDN, admission.KindAssetNotInManifest}},
		// Bare IDs in a JSON list are the manifest's or refused: one that
		// climbs out of the assets is not dropped.
		{name: "a JSON list naming an ID the manifest lacks", running: amd64Conf.String(),
			page: `{"assets": ["js/app.1111.js", "./../../etc/x.js"]}`,
			edit: func(fx *fixture, c *admission.Config) { fx.pageType = "application/json" },
			want: []admission.Kind{admission.KindAssetMissingOnCDN, admission.KindAssetNotInManifest}},
		{name: "expired manifest", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) {
				exp := fx.m.Release.CreatedAt.Add(time.Minute)
				fx.m.Release.ExpiresAt = &exp
			},
			want: []admission.Kind{admission.KindManifestExpired}},
		{name: "invalid manifest", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) {
				fx.raw = `{"apiVersion":"lockstep.dev/v1","kind":"ReleaseManifest","release":{"name":"store-web","generation":0}}`
			},
			want: []admission.Kind{admission.KindManifestInvalid}},
		{name: "image not in the manifest", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) { c.Image = "api" },
			want: []admission.Kind{admission.KindImageNotNamed}},
		{name: "only image by default", running: amd64Conf.String(), match: "config",
			edit: func(fx *fixture, c *admission.Config) { c.Image = "" }},
		{name: "unsigned not allowed", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) { c.AllowUnsigned = false },
			want: []admission.Kind{admission.KindManifestUnsigned}},
		{name: "signature verifies", running: amd64Conf.String(), match: "config", warn: []admission.Kind{},
			edit: func(fx *fixture, c *admission.Config) {
				c.AllowUnsigned, c.Verifier = false, verifierFunc(func(*manifest.Signed) error { return nil })
			}},
		{name: "bad signature", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) {
				c.AllowUnsigned, c.Verifier = false, verifierFunc(func(*manifest.Signed) error { return errors.New("signature does not verify") })
			},
			want: []admission.Kind{admission.KindManifestSignature}},
		{name: "rollback", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) { c.Guard = &memGuard{have: map[string]int64{"store-web": 8}} },
			want: []admission.Kind{admission.KindManifestRollback}},
		{name: "manifest file missing", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) { c.Source = manifest.FileSource{Path: fx.path + ".nope"} },
			want: []admission.Kind{admission.KindDependencyUnreachable}, unverified: true},
		{name: "app not answering", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) {
				c.Probes = []string{fx.app.URL + "/"}
				c.Wait = 300 * time.Millisecond
				fx.app.Close()
			},
			want: []admission.Kind{admission.KindDependencyUnreachable}, unverified: true},
		// The app never comes up, but the image is another one: that is
		// final, so the gate stops waiting for the page at once (a
		// not-waited-for warning), and refuses (exit 1, not 3).
		{name: "a mismatch beats could-not-check", running: stranger.String(),
			edit: func(fx *fixture, c *admission.Config) { c.Wait = time.Minute; fx.app.Close() },
			want: []admission.Kind{admission.KindImageDigestMismatch}, warn: []admission.Kind{admission.KindManifestUnsigned, admission.KindNotWaitedFor}},
		// The manifest is refused while the app is not up and the wait
		// is a minute long: the refusal is final, nothing is waited for.
		{name: "a refused manifest does not wait for the app", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) {
				c.Wait = time.Minute
				fx.app.Close()
				fx.raw = `{"apiVersion":"lockstep.dev/v1","kind":"ReleaseManifest","release":{"name":"store-web","generation":0}}`
			},
			want: []admission.Kind{admission.KindManifestInvalid}, warn: []admission.Kind{admission.KindNotWaitedFor}, maxWait: time.Second},
		// The container's name is mistyped (it never appears), but the
		// page answered naming an asset the manifest lacks, or one on a
		// foreign host: final, so the gate does not wait a minute for the
		// container, and refuses (exit 1, not 3).
		{name: "a page naming an unlisted asset does not wait for the container", running: amd64Conf.String(),
			page: `<!doctype html><script src="CDN/js/app.1111.js"></script><script src="CDN/js/evil.9999.js"></script>`,
			edit: func(fx *fixture, c *admission.Config) { c.Wait = time.Minute; c.Running = neverRunning{} },
			want: []admission.Kind{admission.KindAssetMissingOnCDN, admission.KindAssetNotInManifest},
			warn: []admission.Kind{admission.KindManifestUnsigned, admission.KindNotWaitedFor}, maxWait: time.Second},
		{name: "a page naming a foreign host does not wait for the container", running: amd64Conf.String(),
			page: `<!doctype html><script src="CDN/js/app.1111.js"></script><script src="https://evil.example/x.js"></script>`,
			edit: func(fx *fixture, c *admission.Config) { c.Wait = time.Minute; c.Running = neverRunning{} },
			want: []admission.Kind{admission.KindAssetForeignHost},
			warn: []admission.Kind{admission.KindManifestUnsigned, admission.KindNotWaitedFor}, maxWait: time.Second},
		// The page is the release's: nothing is final, so the missing
		// container is waited for, to the wait's end.
		{name: "a page of the release waits for the container", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) { c.Wait = 300 * time.Millisecond; c.Running = neverRunning{} },
			want: []admission.Kind{admission.KindDependencyUnreachable}, unverified: true},
		{name: "runtime panics", running: amd64Conf.String(),
			edit: func(fx *fixture, c *admission.Config) { c.Running = panicky{} },
			want: []admission.Kind{admission.KindDependencyUnreachable}, unverified: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := tt.page
			if page == "" {
				page = v1Page
			}
			fx := newFixture(t, v1Assets, page)
			cfg := fx.config(tt.running)
			if tt.edit != nil {
				tt.edit(fx, &cfg)
				fx.write(t)
			}
			d := admission.Check(context.Background(), cfg)
			refused := kinds(d, admission.Refuse)
			want := tt.want
			slices.Sort(want)
			if !slices.Equal(refused, want) {
				t.Fatalf("refusing kinds = %v, want %v; findings:\n%s", refused, want, dump(d))
			}
			if d.Allowed != (len(want) == 0) || d.Unverified != tt.unverified {
				t.Errorf("Allowed = %v, Unverified = %v, want %v, %v", d.Allowed, d.Unverified, len(want) == 0, tt.unverified)
			}
			if tt.maxWait > 0 && d.Waited > tt.maxWait {
				t.Errorf("waited %v after a final refusal, want at most %v", d.Waited, tt.maxWait)
			}
			if tt.warn != nil {
				warn := tt.warn
				slices.Sort(warn)
				if got := kinds(d, admission.Warn); !slices.Equal(got, warn) {
					t.Errorf("warnings = %v, want %v", got, warn)
				}
			}
			imageRefused := slices.Contains(want, admission.KindImageDigestMismatch) || slices.Contains(want, admission.KindImageNotPinned)
			if (tt.match != "" || imageRefused) && d.Match != tt.match {
				t.Errorf("Match = %q, want %q", d.Match, tt.match)
			}
		})
	}
}

func dump(d admission.Decision) string {
	var b strings.Builder
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "  %s %s %s: %s\n", f.Severity, f.Kind, f.Subject, f.Message)
	}
	return b.String()
}

type verifierFunc func(*manifest.Signed) error

func (f verifierFunc) Verify(_ context.Context, s *manifest.Signed) error { return f(s) }

// neverRunning is a container that never appears (a mistyped name).
type neverRunning struct{}

func (neverRunning) Observe(context.Context) (*running.Observation, error) {
	return nil, fmt.Errorf("docker: no such container acme-wbe: %w", running.ErrNoContainer)
}

type panicky struct{}

func (panicky) Observe(context.Context) (*running.Observation, error) { panic("boom") }

// memGuard is a GenerationGuard in memory.
type memGuard struct {
	mu       sync.Mutex
	have     map[string]int64
	accepted []string
}

func (g *memGuard) Check(_ context.Context, s *manifest.Signed) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	release, gen := s.Manifest.Release.Name, s.Manifest.Release.Generation
	if have := g.have[release]; gen < have {
		return &manifest.GenerationError{Release: release, Have: have, Offered: gen}
	}
	return nil
}

func (g *memGuard) Accept(_ context.Context, s *manifest.Signed) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.have[s.Manifest.Release.Name] = s.Manifest.Release.Generation
	g.accepted = append(g.accepted, fmt.Sprintf("%s %s", s.Manifest.ID(), s.Digest))
	return nil
}

func TestCheckDecisionFields(t *testing.T) {
	all := v1Page + `<script src="CDN/js/vendor.3333.js"></script>`
	fx := newFixture(t, v1Assets, all)
	cfg := fx.config(amd64Conf.String())
	g := &memGuard{have: map[string]int64{}}
	cfg.Guard = g
	d := admission.Check(context.Background(), cfg)
	if !d.Allowed {
		t.Fatalf("refused:\n%s", dump(d))
	}
	want := manifest.MustParseDigest(mustDigest(t, fx.m))
	if d.Release != "store-web" || d.Generation != 7 || d.ManifestDigest != want || d.ManifestLocation != fx.path {
		t.Errorf("manifest fields = %q %d %s %q", d.Release, d.Generation, d.ManifestDigest, d.ManifestLocation)
	}
	if d.RunningDigest != amd64Conf || d.Running == nil || d.Running.Source != "digest" {
		t.Errorf("running = %s %+v", d.RunningDigest, d.Running)
	}
	if !slices.Equal(d.Served, []string{"css/site.2222.css", "img/logo.svg", "js/app.1111.js", "js/vendor.3333.js"}) {
		t.Errorf("Served = %q", d.Served)
	}
	if d.ServedFingerprint != fx.m.Assets.Fingerprint {
		t.Errorf("ServedFingerprint = %s, want the manifest's %s when every asset is served", d.ServedFingerprint, fx.m.Assets.Fingerprint)
	}
	if !d.Unsigned || !d.Has(admission.KindManifestUnsigned) {
		t.Errorf("an unsigned manifest must be said: Unsigned = %v, findings:\n%s", d.Unsigned, dump(d))
	}
	if d.CDNChecked != 4 || d.Requests < 5 {
		t.Errorf("CDNChecked = %d, Requests = %d; want 4 and at least 5 (1 page + 4 assets)", d.CDNChecked, d.Requests)
	}
	if len(g.accepted) != 1 || g.have["store-web"] != 7 {
		t.Errorf("guard accepted %q", g.accepted)
	}
	cfg.DryRun = true
	g.accepted = nil
	if d := admission.Check(context.Background(), cfg); !d.Allowed || !d.DryRun || len(g.accepted) != 0 {
		t.Errorf("dry run: Allowed %v DryRun %v, guard accepted %q (want nothing)", d.Allowed, d.DryRun, g.accepted)
	}
}

func mustDigest(t *testing.T, m *manifest.Manifest) string {
	t.Helper()
	d, err := m.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}
