package admission_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/browsertest"
	"github.com/lockstep-dev/lockstep/internal/testenv"
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
	// stay keeps each page open at least this long (a visitor who
	// stays): for what starts late, as Angular's service worker
	// (registerWhenStable:30000).
	stay time.Duration
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
	{name: "angular", cdn: "https://cdn.example.test/ng/", spa: true, stay: 32 * time.Second, known: []string{
		// Classes 4 and 5: provideServiceWorker('ngsw-worker.js') in
		// main.js, a string the JavaScript reader skips, registered
		// against the document's base: on the instance, not the CDN.
		"/ unchecked instance /ngsw-worker.js",
		"/report unchecked instance /ngsw-worker.js",
		// Classes 3 and 5: the service worker fetches ngsw.json, then
		// every file its asset groups prefetch, at its own scope: the
		// instance serves (and must serve) the app shell that the pages
		// load from the CDN.
		"/ unchecked instance /ngsw.json",
		"/ unchecked instance /chunk-ETITE4JA.js",
		"/ unchecked instance /chunk-IMCKXERO.js",
		"/ unchecked instance /chunk-UGKFDJOQ.js",
		"/ unchecked instance /index.html",
		"/ unchecked instance /main-7B27JSHH.js",
		"/ unchecked instance /styles-OPCPEDXL.css",
		"/report unchecked instance /ngsw.json",
		"/report unchecked instance /chunk-ETITE4JA.js",
		"/report unchecked instance /chunk-IMCKXERO.js",
		"/report unchecked instance /chunk-UGKFDJOQ.js",
		"/report unchecked instance /index.html",
		"/report unchecked instance /main-7B27JSHH.js",
		"/report unchecked instance /styles-OPCPEDXL.css",
		// Class 4: the lazy route's component styles are a stylesheet
		// inside a JavaScript string (chunk-UGKFDJOQ.js: styles:['@font-face
		// {…src:url("https://cdn.example.test/ng/media/…")…']).
		"/report unchecked cdn /ng/media/fixture-UABVN2JS.woff2",
		"/report unchecked cdn /ng/media/tile-S7MOP3PH.png",
	}},
	{name: "sveltekit", cdn: "https://cdn.example.test/svelte/"},
	{name: "astro", cdn: "https://cdn.example.test/astro/", known: []string{
		// Class 2: the islands' component-url and renderer-url, URL
		// attributes of a custom element (<astro-island>) that Astro's
		// inline loader imports; and, through them, the modules they
		// import (read once the islands are in the closure).
		"/ unchecked cdn /astro/_astro/Counter.Dwj4-GRF.js",
		"/ unchecked cdn /astro/_astro/client.DbUMlaRf.js",
		"/ unchecked cdn /astro/_astro/preact.module.BTqC4RwC.js",
		"/ unchecked cdn /astro/_astro/hooks.module.JhoGcvsy.js",
		"/ unchecked cdn /astro/_astro/jsxRuntime.module.Dqw-6DmR.js",
		"/about/ unchecked cdn /astro/_astro/Chart.CavikWYc.js",
		"/about/ unchecked cdn /astro/_astro/Counter.Dwj4-GRF.js",
		"/about/ unchecked cdn /astro/_astro/client.DbUMlaRf.js",
		"/about/ unchecked cdn /astro/_astro/preact.module.BTqC4RwC.js",
		"/about/ unchecked cdn /astro/_astro/hooks.module.JhoGcvsy.js",
		"/about/ unchecked cdn /astro/_astro/jsxRuntime.module.Dqw-6DmR.js",
	}},
	{name: "react-router", cdn: "https://cdn.example.test/rr/", spa: true},
	{name: "nextjs", cdn: "https://cdn.example.test/next/", known: []string{
		// Class 4: Turbopack's chunk lists name "static/chunks/…",
		// relative to the runtime's base (assetPrefix + /_next/), not to
		// the file; the runtime (turbopack-1aa3j7rwwv161.js) loads them.
		"/ unchecked cdn /next/_next/static/chunks/1b1dmvhb2wmok.css",
		"/ unchecked cdn /next/_next/static/chunks/1vit2duz4v_85.js",
		"/docs unchecked cdn /next/_next/static/chunks/0mop3l2_dq52e.js",
		"/docs unchecked cdn /next/_next/static/chunks/1b1dmvhb2wmok.css",
		// Class 1: the app router prefetches every linked route (its
		// document, its RSC payloads on the instance, and the chunks its
		// HTML names), which only the linked page reaches.
		"/ unchecked cdn /next/_next/static/chunks/2-ue40fbvxqhl.js",
		"/ unchecked instance /about",
		"/ unchecked instance /docs",
		"/about unchecked cdn /next/_next/static/chunks/1bhy7vfpfrycg.css",
		"/about unchecked cdn /next/_next/static/chunks/1dwlg2jc3hfb4.js",
		"/about unchecked instance /",
		"/about unchecked instance /tile.png",
		// Classes 1 and 5: the RSC payloads of a prefetched route, on the
		// instance; their names (__next.about.__PAGE__.txt) are in no
		// file: the router builds them from the route's segments.
		"/ unchecked instance /about/__next._tree.txt",
		"/ unchecked instance /about/__next.about.__PAGE__.txt",
		"/about unchecked instance /__next.__PAGE__.txt",
		"/about unchecked instance /__next._tree.txt",
		// Class 3: the pages router's _buildManifest.js names each
		// route's chunks; its page loader (0h__6kh36aa07.js) prefetches
		// those of every linked route.
		"/docs unchecked cdn /next/_next/static/chunks/1qtjvhdg3bxf_.js",
		"/docs unchecked cdn /next/_next/static/chunks/329bkbvhzb3nh.js",
		"/docs/setup unchecked cdn /next/_next/static/chunks/0hiq87pxu9bf5.js",
		"/docs/setup unchecked cdn /next/_next/static/chunks/1bhy7vfpfrycg.css",
		"/docs/setup unchecked cdn /next/_next/static/chunks/2x36qip6_j_86.js",
	}},
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
				gaps, _ := o.judge(t, "/", 0)
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
}

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
	o := &oracleDeployment{fx: fx, b: b, dist: dist, hosts: map[string]string{}}
	// Where a URL path serves the build: the pages at "/" and, under
	// publicPath, every file.
	serveAt := func(at string) string {
		if at == "/" {
			return ""
		}
		return fmt.Sprintf("location ^~ %s { alias %s/; }", at, dist)
	}
	cors := "add_header Access-Control-Allow-Origin * always;"
	fallback := "=404"
	if fx.spa {
		fallback = "/index.html"
	}
	o.instance = testenv.Nginx(t, dist, "index index.html;", "location / { try_files $uri $uri.html $uri/ "+fallback+"; }", serveAt(pub))
	if fx.cdn == "" {
		local := testenv.Nginx(t, dist, cors, serveAt(pub))
		o.cdnBase, _ = url.Parse(local + pub)
	} else {
		base, err := url.Parse(fx.cdn)
		if err != nil || base.Scheme != "https" || !strings.HasSuffix(base.Path, "/") {
			t.Fatalf("cdn %q: want an https base URL ending in /", fx.cdn)
		}
		o.cdnBase = base
		cert, key := b.WriteServerCert(t, t.TempDir(), base.Hostname())
		tlsPort := testenv.FreePort(t)
		testenv.Nginx(t, dist, cors, serveAt(base.Path),
			fmt.Sprintf("listen 127.0.0.1:%d ssl; ssl_certificate %s; ssl_certificate_key %s;", tlsPort, cert, key))
		o.hosts[net.JoinHostPort(base.Hostname(), "443")] = fmt.Sprintf("127.0.0.1:%d", tlsPort)
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

	// Recorded as the CLI's record does.
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
		Assets: assets.Options{Dir: dist, Lists: lists, PublicPath: prefix},
		CDN:    []string{o.cdnBase.String()},
		Source: &manifest.BuildSource{},
	})
	if err != nil {
		t.Fatalf("recording %s: %v", fx.name, err)
	}
	m.Images = []manifest.Image{webImage()}
	o.m = m
	o.manifest = filepath.Join(t.TempDir(), "manifest.json")
	o.write(t)

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

func urlKey(scheme, host, p string) string {
	return strings.ToLower(scheme) + "://" + strings.ToLower(host) + p
}

// maxPages bounds a crawl.
const maxPages = 100

// crawl judges every page of the build and every page their links lead
// to on the instance (a single-page app's client routes), and returns
// their gaps.
func (o *oracleDeployment) crawl(t *testing.T) []string {
	t.Helper()
	queue := slices.Clone(o.pages)
	seen := map[string]bool{}
	for _, p := range queue {
		seen[p] = true
	}
	inst, _ := url.Parse(o.instance)
	var gaps []string
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		g, links := o.judge(t, page, o.fx.stay)
		gaps = append(gaps, g...)
		for _, l := range links {
			u, err := url.Parse(l)
			if err != nil || !strings.EqualFold(u.Host, inst.Host) || seen[u.Path] {
				continue
			}
			// A link to a file that is no page (robots.txt, an image).
			if rel, ok := o.file(strings.TrimPrefix(u.Path, "/")); ok && !strings.HasSuffix(rel, ".html") {
				continue
			}
			seen[u.Path] = true
			if len(seen) > maxPages {
				t.Fatalf("over %d pages: %s", maxPages, u.Path)
			}
			queue = append(queue, u.Path)
		}
	}
	return gaps
}

// judge probes page with the gate, loads it in the browser, and returns
// its links and its gaps, each "PAGE KIND ORIGIN PATH (details)":
//   - refused KIND SUBJECT: the gate refused the correct deployment;
//   - unchecked ORIGIN PATH: the browser loaded a file of the release
//     there that the gate does not check there;
//   - unrecorded ORIGIN PATH: the browser loaded a file of the build
//     that the manifest does not hold.
func (o *oracleDeployment) judge(t *testing.T, page string, stay time.Duration) (gaps, links []string) {
	t.Helper()
	ctx := context.Background()
	rc := &recordingChecker{CDNChecker: cdngate.Checker{}, checked: map[string]bool{}}
	d := admission.Check(ctx, admission.Config{
		CDN:    rc,
		Source: manifest.FileSource{Path: o.manifest}, AllowUnsigned: true,
		Image: "web", Running: running.Given{Value: amd64Conf.String()}, Platform: "linux/amd64",
		Probes:  []string{o.instance + page},
		Client:  o.client,
		Timeout: 60 * time.Second,
		Rand:    rand.New(rand.NewPCG(1, 2)),
	})
	for _, f := range d.Findings {
		if f.Severity == admission.Refuse {
			gaps = append(gaps, fmt.Sprintf("%s refused %s %s (%s)", page, f.Kind, f.Subject, f.Message))
		}
	}
	loadedPage, err := o.b.Load(ctx, o.instance+page, browsertest.LoadOptions{Hosts: o.hosts, Stay: stay})
	if err != nil {
		t.Fatalf("loading %s: %v", page, err)
	}
	reqs := loadedPage.Requests
	inst, _ := url.Parse(o.instance)
	pub := o.fx.publicPath
	if pub == "" {
		pub = "/"
	}
	seen := map[string]bool{}
	var loaded []string
	defer func() {
		t.Logf("%s: %d requests, %d for files of the release, %d gaps: %s", page, len(reqs), len(loaded), len(gaps), strings.Join(loaded, " "))
	}()
	for i, r := range reqs {
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue // data:, blob:
		}
		if i == 0 && r.Type == "Document" {
			continue // the page itself: what the probe reads
		}
		var origin, base string
		switch {
		case strings.EqualFold(u.Host, inst.Host):
			origin, base = "instance", "/"
			if pub != "/" && strings.HasPrefix(u.Path, pub) {
				base = pub
			}
		case strings.EqualFold(u.Host, o.cdnBase.Host) && strings.HasPrefix(u.Path, o.cdnBase.Path):
			origin, base = "cdn", o.cdnBase.Path
		default:
			continue // another host: not the release's
		}
		rel, ok := o.file(strings.TrimPrefix(u.Path, base))
		if !ok {
			t.Logf("%s: not a file of the release: %s", page, r)
			continue
		}
		loaded = append(loaded, origin+" "+u.Path)
		gap := ""
		switch _, inManifest := o.m.Assets.File(rel); {
		case !inManifest:
			gap = "unrecorded"
		case !rc.checked[urlKey(u.Scheme, u.Host, base+rel)]:
			gap = "unchecked"
		default:
			continue
		}
		g := fmt.Sprintf("%s %s %s %s", page, gap, origin, u.Path)
		if seen[g] {
			continue
		}
		seen[g] = true
		gaps = append(gaps, fmt.Sprintf("%s (%s %s, from the %s, by %s)", g, r.Type, r.URL, r.Target, r.Initiator))
	}
	return gaps, loadedPage.Links
}

// file returns the file of the build that nginx serves for the URL path
// rel (relative to where the build is served), as its try_files does.
func (o *oracleDeployment) file(rel string) (string, bool) {
	if p, err := url.PathUnescape(rel); err == nil {
		rel = p
	}
	for _, c := range []string{rel, rel + ".html", path.Join(rel, "index.html")} {
		c = strings.TrimPrefix(path.Clean("/"+c), "/")
		if fi, err := os.Stat(filepath.Join(o.dist, filepath.FromSlash(c))); err == nil && fi.Mode().IsRegular() {
			return c, true
		}
	}
	return "", false
}
