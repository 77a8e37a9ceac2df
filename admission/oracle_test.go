package admission_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/browsertest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/record"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

// oracleFixture is a build under testdata/web as the browser oracle
// deploys it: recorded as `lockstep record --assets dist [--asset-list
// LIST...] [--public-path P] --cdn BASE` records it, its pages served by
// an instance (nginx on 127.0.0.1), its files by a CDN (nginx on another
// port, with Access-Control-Allow-Origin: *, as real CDNs send).
type oracleFixture struct {
	name string
	// lists are the bundler's lists (--asset-list), relative to dist.
	lists []string
	// publicPath is where the instance and the CDN serve the build's
	// files (webpack's output.publicPath); the instance serves the pages
	// at "/" too. "" is "/".
	publicPath string
	// cdn is the CDN base the build names in its pages (a framework's
	// assetPrefix), e.g. "https://cdn.example.test/next/": served by nginx
	// over TLS on loopback, the name mapped there for the browser (its
	// proxy) and for the gate (its dialer), with a certificate of the
	// browser's CA. "" is a CDN of the test's own, http://127.0.0.1:PORT
	// followed by publicPath.
	cdn string
	// spa: the instance answers a path that is no file with index.html,
	// as a single-page app's server does (its client routes).
	spa bool
	// until is what each page is kept open for (browsertest's
	// LoadOptions.Until), at most stay after its navigation (a visitor
	// who stays): for what starts late, as Angular's service worker
	// (registerWhenStable:30000: when the app is stable, in about a
	// second here, or after 30 s). A page whose until does not come
	// within stay fails the oracle: it has not seen what it judges.
	until string
	stay  time.Duration
	// instancePaths, cdnPaths and bothPaths are record's --instance-path,
	// --cdn-path and --cdn-and-instance-path, as the fixture's page in
	// docs/frameworks says to record it. The instance and the CDN then
	// hold only the files the manifest says each serves (without any, both
	// hold every file).
	instancePaths, cdnPaths, bothPaths []string
	// known are the gaps the oracle knows of (see oracleGap), each
	// "PAGE GAP"; the test fails on a gap that is not listed, and on a
	// listed one that is no longer a gap, so that the list only
	// shrinks as the graph gets better.
	known []string
}

// oracleFixtures lists every fixture under testdata/web: the oracle
// fails for a fixture with a dist/ that is not here.
var oracleFixtures = []oracleFixture{
	{name: "vite-react", lists: []string{".vite/manifest.json"}},
	{name: "webpack", publicPath: "/static/", lists: []string{"asset-manifest.json", "assets-manifest.json"}},
	{name: "angular", cdn: "https://cdn.example.test/ng/", spa: true, until: "navigator.serviceWorker.ready", stay: 32 * time.Second,
		// docs/frameworks/angular.md: the service worker, its manifest and
		// the pages on the instance; the app shell on both (the page loads
		// it from the CDN, the service worker from its scope).
		instancePaths: []string{"ngsw*", "safety-worker.js", "worker-basic.min.js", "index.html", "favicon.svg", "manifest.webmanifest", "robots.txt", "icons"},
		bothPaths:     []string{"main-*.js", "chunk-*.js", "styles-*.css"}},
	// docs/frameworks/sveltekit.md: paths.assets moves _app/ and the
	// static/ files app.html names; the pages and robots.txt on the
	// instance.
	{name: "sveltekit", cdn: "https://cdn.example.test/svelte/", instancePaths: []string{"*.html", "robots.txt"}},
	// docs/frameworks/astro.md: assetsPrefix moves _astro/ only.
	{name: "astro", cdn: "https://cdn.example.test/astro/", cdnPaths: []string{"_astro"}},
	// docs/frameworks/react-router.md: Vite's base moves assets/ only.
	{name: "react-router", cdn: "https://cdn.example.test/rr/", spa: true, cdnPaths: []string{"assets"}},
	{name: "nextjs", cdn: "https://cdn.example.test/next/",
		// docs/frameworks/nextjs.md: assetPrefix moves _next/ only.
		cdnPaths: []string{"_next"}},
}

// TestBrowserOracle: a real browser is the judge of the asset graph. Each
// page (.html) of each fixture is loaded in headless Chromium from a local
// instance and CDN, until the network is idle and scrolled to the bottom,
// and every request it made (its own, its frames', its workers' and
// service workers') for a file of the release must be one the boot gate
// checks when that page is probed: the same URL, so on the same origin.
// What is not is a gap, named with the page, the URL, the request's type
// and its initiator: a file the gate would admit missing. The gate must
// also admit the correct deployment. The gaps found must be exactly the
// fixture's known ones.
//
// Run it alone: go test -run TestBrowserOracle ./admission/
func TestBrowserOracle(t *testing.T) {
	root := filepath.Join("..", "testdata", "web")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "dist")); err == nil &&
			!slices.ContainsFunc(oracleFixtures, func(fx oracleFixture) bool { return fx.name == e.Name() }) {
			t.Errorf("testdata/web/%s is a build the browser oracle does not load: add it to oracleFixtures", e.Name())
		}
	}
	b := browsertest.Start(t)
	t.Logf("browser: %s", b.Version)
	for _, fx := range oracleFixtures {
		t.Run(fx.name, func(t *testing.T) {
			o := deployForOracle(t, b, fx)
			gaps := o.crawl(t)
			found := map[string]bool{}
			for _, g := range gaps {
				found[g] = true
			}
			for _, g := range gaps {
				if !slices.Contains(fx.known, gapKey(g)) {
					t.Errorf("a gap the graph does not close: %s", g)
				}
			}
			for _, k := range fx.known {
				if !slices.ContainsFunc(gaps, func(g string) bool { return gapKey(g) == k }) {
					t.Errorf("a known gap is no longer a gap (remove it from oracleFixtures): %s", k)
				}
			}
			t.Run("every file the browser loaded, deleted, is refused", func(t *testing.T) {
				o.proveDeletions(t)
			})
		})
	}
	// The oracle itself: a manifest that lacks an edge, or a file, is
	// caught, with the file named (the lazy chunk's stylesheet is named
	// by the entry's preload table; the font by the page's stylesheet,
	// which the probe reads, so a font left out of the manifest is
	// refused by the gate too).
	t.Run("the oracle sees what the manifest lacks", func(t *testing.T) {
		vite := webFixtures[0]
		cases := []struct {
			name string
			edit func(m *manifest.Manifest)
			want []string
		}{
			{name: "no graph (a v1 manifest)", edit: func(m *manifest.Manifest) {
				for i := range m.Assets.Files {
					m.Assets.Files[i].Loads = nil
				}
			}, want: []string{"/ unchecked instance /" + vite.lazy, "/ unchecked instance /assets/Report-mWOfxOXy.css", "/ unchecked instance /" + vite.worker}},
			{name: "the entry's worker edge gone", edit: func(m *manifest.Manifest) {
				for i := range m.Assets.Files {
					m.Assets.Files[i].Loads = slices.DeleteFunc(m.Assets.Files[i].Loads, func(l string) bool { return l == vite.worker })
				}
			}, want: []string{"/ unchecked instance /" + vite.worker}},
			{name: "the font left out of the manifest", edit: func(m *manifest.Manifest) {
				m.Assets.Files = slices.DeleteFunc(m.Assets.Files, func(f manifest.File) bool { return f.Path == vite.font })
				for i := range m.Assets.Files {
					m.Assets.Files[i].Loads = slices.DeleteFunc(m.Assets.Files[i].Loads, func(l string) bool { return l == vite.font })
				}
				m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
			}, want: []string{"/ refused asset-not-in-manifest " + vite.font, "/ unrecorded instance /" + vite.font}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				o := deployForOracle(t, b, oracleFixtures[0])
				tc.edit(o.m)
				o.write(t)
				var keys []string
				gaps, _ := o.judge(t, "/", "", 0)
				for _, g := range gaps {
					keys = append(keys, gapKey(g))
				}
				slices.Sort(keys)
				if want := slices.Sorted(slices.Values(tc.want)); !slices.Equal(keys, want) {
					t.Errorf("gaps = %q, want %q", keys, want)
				}
			})
		}
	})
}

// proveDeletions deletes, one at a time, each file the browser loaded
// for a page from the origin it loaded it from (the instance or the CDN),
// and asserts that a default gate probing that page refuses, with a
// finding that the file is missing there. It reuses the browser's record
// of the crawl (the slow part): the gate alone is fast. The correct
// deployment, admitted, is judge's first check.
func (o *oracleDeployment) proveDeletions(t *testing.T) {
	t.Helper()
	pages := slices.Sorted(maps.Keys(o.loaded))
	if len(pages) == 0 {
		t.Fatal("the browser loaded no file of the release on any page")
	}
	n := 0
	for _, page := range pages {
		for _, l := range o.loaded[page] {
			dir, want := o.instDir, admission.KindAssetMissingOnInstance
			if l.origin == "cdn" {
				dir, want = o.cdnDir, admission.KindAssetMissingOnCDN
			}
			p := filepath.Join(dir, filepath.FromSlash(l.rel))
			if err := os.Rename(p, p+".deleted"); err != nil {
				t.Fatal(err)
			}
			d := o.gate(page, nil)
			if err := os.Rename(p+".deleted", p); err != nil {
				t.Fatal(err)
			}
			n++
			if d.Allowed {
				t.Errorf("%s: %s deleted from the %s, the gate admits", page, l.rel, l.origin)
				continue
			}
			// Missing there; or, from a single-page app's server that
			// answers a missing file with index.html, not the recorded
			// bytes; or, index.html itself deleted from it, a server that
			// answers every route with an error (nginx: a 500 of its
			// fallback's loop), could not check, naming the file.
			spaIndex := o.fx.spa && l.origin == "instance" && l.rel == "index.html"
			if !slices.ContainsFunc(d.Refusals(), func(f admission.Finding) bool {
				return f.Subject == l.rel && (f.Kind == want || f.Kind == admission.KindAssetContentMismatch ||
					spaIndex && f.Kind == admission.KindDependencyUnreachable)
			}) {
				t.Errorf("%s: %s deleted from the %s: refused, but with no finding that it is missing: %+v", page, l.rel, l.origin, d.Refusals())
			}
		}
	}
	t.Logf("%d deletions over %d pages", n, len(pages))
}

// gate is a default admit probing page, with the CDN checker cdn (nil:
// lockstep's).
func (o *oracleDeployment) gate(page string, cdn admission.CDNChecker) admission.Decision {
	if cdn == nil {
		cdn = cdngate.Checker{}
	}
	return admission.Check(context.Background(), admission.Config{
		CDN:    cdn,
		Source: manifest.FileSource{Path: o.manifest}, AllowUnsigned: true,
		Image: "web", Running: running.Given{Value: amd64Conf.String()}, Platform: "linux/amd64",
		Probes:  []string{o.instance + page},
		Client:  o.client,
		Timeout: 60 * time.Second,
		Rand:    rand.New(rand.NewPCG(1, 2)),
	})
}

// gapKey is a gap without its details (what follows " ("): "PAGE KIND
// ORIGIN PATH".
func gapKey(g string) string {
	k, _, _ := strings.Cut(g, " (")
	return k
}

// oracleDeployment is a fixture deployed for the oracle.
type oracleDeployment struct {
	fx       oracleFixture
	b        *browsertest.Browser
	dist     string
	m        *manifest.Manifest
	manifest string // its path
	instance string // "http://127.0.0.1:PORT"
	cdnBase  *url.URL
	hosts    map[string]string
	client   *transport.Client
	pages    []string // URL paths on the instance
	// instDir and cdnDir are what the instance and the CDN serve.
	instDir, cdnDir string
	// loaded holds, by page, the files of the release the browser loaded
	// for it, in the order it first loaded them.
	loaded map[string][]oracleLoad
}

// oracleLoad is a file of the release a browser loaded from an origin
// ("instance" or "cdn").
type oracleLoad struct{ origin, rel string }

func deployForOracle(t *testing.T, b *browsertest.Browser, fx oracleFixture) *oracleDeployment {
	t.Helper()
	dist, err := filepath.Abs(filepath.Join("..", "testdata", "web", fx.name, "dist"))
	if err != nil {
		t.Fatal(err)
	}
	pub := fx.publicPath
	if pub == "" {
		pub = "/"
	}
	o := &oracleDeployment{fx: fx, b: b, dist: dist, hosts: map[string]string{}, loaded: map[string][]oracleLoad{}}
	if fx.cdn == "" {
		o.cdnBase = &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", fmt.Sprint(testenv.FreePort(t))), Path: pub}
	} else {
		base, err := url.Parse(fx.cdn)
		if err != nil || base.Scheme != "https" || !strings.HasSuffix(base.Path, "/") {
			t.Fatalf("cdn %q: want an https base URL ending in /", fx.cdn)
		}
		o.cdnBase = base
	}

	// Recorded as the CLI's record does, with the fixture's flags.
	var lists []string
	for _, l := range fx.lists {
		lists = append(lists, filepath.Join(dist, l))
	}
	prefix := pub
	if prefix == "/" {
		prefix = ""
	}
	m, err := record.Manifest(context.Background(), record.Options{
		Release: "oracle-" + fx.name, Generation: 1,
		Assets:        assets.Options{Dir: dist, Lists: lists, PublicPath: prefix},
		CDN:           []string{o.cdnBase.String()},
		Source:        &manifest.BuildSource{},
		InstancePaths: fx.instancePaths, CDNPaths: fx.cdnPaths, CDNAndInstancePaths: fx.bothPaths,
	})
	if err != nil {
		t.Fatalf("recording %s: %v", fx.name, err)
	}
	m.Images = []manifest.Image{webImage()}
	o.m = m
	o.manifest = filepath.Join(t.TempDir(), "manifest.json")
	o.write(t)

	// Deployed as the manifest says: the instance and the CDN each hold
	// (a copy of) the files it says they serve (File.Served); both hold a
	// file it says nothing of where (the instance serving the whole build
	// as well, as a static host does) or that it does not hold. Copies, so
	// that a test can delete any one of them.
	o.instDir, o.cdnDir = t.TempDir(), t.TempDir()
	err = filepath.WalkDir(dist, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dist, p)
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, recorded := m.Assets.File(filepath.ToSlash(rel))
		all := !recorded || f.Served == ""
		for dir, holds := range map[string]bool{o.instDir: all || f.OnInstance(), o.cdnDir: all || f.OnCDN()} {
			if !holds {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, rel), body, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Where a URL path serves the build: the pages at "/" and, under
	// publicPath, every file.
	serveAt := func(at, dir string) string {
		if at == "/" {
			return ""
		}
		return fmt.Sprintf("location ^~ %s { alias %s/; }", at, dir)
	}
	cors := "add_header Access-Control-Allow-Origin * always;"
	fallback := "=404"
	if fx.spa {
		fallback = "/index.html"
	}
	o.instance = testenv.Nginx(t, o.instDir, "index index.html;", "location / { try_files $uri $uri.html $uri/ "+fallback+"; }", serveAt(pub, o.instDir))
	if fx.cdn == "" {
		port, _ := strconv.Atoi(o.cdnBase.Port())
		testenv.NginxAt(t, port, o.cdnDir, cors, serveAt(pub, o.cdnDir))
	} else {
		cert, key := b.WriteServerCert(t, t.TempDir(), o.cdnBase.Hostname())
		tlsPort := testenv.FreePort(t)
		testenv.Nginx(t, o.cdnDir, cors, serveAt(o.cdnBase.Path, o.cdnDir),
			fmt.Sprintf("listen 127.0.0.1:%d ssl; ssl_certificate %s; ssl_certificate_key %s;", tlsPort, cert, key))
		o.hosts[net.JoinHostPort(o.cdnBase.Hostname(), "443")] = fmt.Sprintf("127.0.0.1:%d", tlsPort)
	}
	// The gate reaches the same servers: a named CDN through the same
	// mapping, trusting the browser's CA; loopback directly; nothing else.
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	o.client = transport.New(transport.Policy{MaxAttempts: 2, BaseDelay: time.Millisecond},
		transport.WithDialContext(func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := o.hosts[addr]; ok {
				addr = to
			}
			host, _, _ := net.SplitHostPort(addr)
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return nil, fmt.Errorf("the oracle's gate reaches loopback only, not %s", addr)
			}
			return dialer.DialContext(ctx, network, addr)
		}),
		transport.WithRootCAs(func() *x509.CertPool { return b.Roots() }))

	// Every page, at the URL a link names it by.
	err = filepath.WalkDir(dist, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		rel, _ := filepath.Rel(dist, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == "index.html":
			rel = ""
		case strings.HasSuffix(rel, "/index.html"):
			rel = strings.TrimSuffix(rel, "index.html")
		default:
			rel = strings.TrimSuffix(rel, ".html")
		}
		o.pages = append(o.pages, "/"+rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// write writes the manifest o.m for the gate.
func (o *oracleDeployment) write(t *testing.T) {
	t.Helper()
	o.m.APIVersion = o.m.Version()
	raw, err := o.m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.manifest, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordingChecker is the gate's CDN check, recording every URL it checks.
type recordingChecker struct {
	admission.CDNChecker
	mu      sync.Mutex
	checked map[string]bool
}

func (r *recordingChecker) CheckAssets(ctx context.Context, req admission.CDNRequest) ([]admission.AssetStatus, error) {
	r.mu.Lock()
	for _, base := range req.Assets.CDN {
		if u, err := url.Parse(base); err == nil {
			for _, p := range req.Paths {
				r.checked[urlKey(u.Scheme, u.Host, strings.TrimSuffix(u.Path, "/")+"/"+p)] = true
			}
		}
	}
	r.mu.Unlock()
	return r.CDNChecker.CheckAssets(ctx, req)
}
