package app_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

// splitFixture deploys a real build of testdata/web: its CDN host
// (cdnHost, e.g. "https://cdn.example.test/next") rewritten to a loopback
// nginx CDN that holds, under cdnPath, the files onCDN says, and a real
// nginx instance that holds the files onInstance says (index.html for a
// route, as a static host does). It records the build with recordArgs and
// the release's image, and returns the manifest's path, the instance's
// URL and the two folders.
func splitFixture(t *testing.T, name, cdnHost, cdnPath string, onCDN, onInstance func(rel string) bool, recordArgs ...string) (mpath, inst, cdnDir, instDir string, e servedEnv) {
	t.Helper()
	src := filepath.Join("..", "..", "..", "testdata", "web", name, "dist")
	build := t.TempDir()
	cdnDir, instDir = t.TempDir(), t.TempDir()
	cdn := testenv.Nginx(t, cdnDir)
	inst = testenv.Nginx(t, instDir, `location / { try_files $uri $uri.html $uri/ =404; }`)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(cdnHost), []byte(cdn+"/"+cdnPath))
		writeFile(t, filepath.Join(build, rel), string(b))
		if onCDN(filepath.ToSlash(rel)) {
			writeFile(t, filepath.Join(cdnDir, cdnPath, rel), string(b))
		}
		if onInstance(filepath.ToSlash(rel)) {
			writeFile(t, filepath.Join(instDir, rel), string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mpath = filepath.Join(t.TempDir(), "release.json")
	args := append([]string{"record", "--release", "store-web", "--generation", "4", "--assets", build,
		"--cdn", cdn + "/" + cdnPath + "/", "--output", mpath}, recordArgs...)
	if code, _, stderr := run(t, args...); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	m, _, err := manifest.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	im, conf := webImage()
	m.Images = []manifest.Image{im}
	m.APIVersion = m.Version()
	raw, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, mpath, string(raw))
	return mpath, inst, filepath.Join(cdnDir, cdnPath), instDir, servedEnv{config: conf}
}

// splitCase is one case of a split fixture: a file deleted, and the
// refusal wanted.
type splitCase struct {
	name          string
	dir, path     string // deleted, under dir
	code          int
	kind          admission.Kind
	subject, want string
}

// runSplit runs a default admit of probes for each case.
func runSplit(t *testing.T, e servedEnv, mpath string, probes []string, cases []splitCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path != "" {
				p := filepath.Join(tc.dir, filepath.FromSlash(tc.path))
				body, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { writeFile(t, p, string(body)) })
			}
			var args []string
			for _, p := range probes {
				args = append(args, "--probe", p)
			}
			e.expect(t, mpath, args, tc.code, tc.kind, tc.subject, tc.want)
		})
	}
}

// TestServedNextjsFixture deploys the real Next.js static export
// (testdata/web/nextjs: assetPrefix https://cdn.example.test/next, here
// rewritten to a loopback nginx) split as Next.js means it: a real nginx
// CDN that holds only _next/ under /next/, a real nginx instance that
// serves the pages, the RSC payloads and public/ files. record --cdn-path
// _next says so; a default admit of the app router's and the pages
// router's pages admits the correct split, and refuses a deleted
// public/ file (on the instance) and a deleted chunk that only the pages
// router's _buildManifest.js names (on the CDN).
func TestServedNextjsFixture(t *testing.T) {
	t.Parallel()
	next := func(rel string) bool { return strings.HasPrefix(rel, "_next/") }
	out, inst, cdnDir, instDir, e := splitFixture(t, "nextjs", "https://cdn.example.test/next", "next",
		next, func(rel string) bool { return !next(rel) }, "--cdn-path", "_next")

	const pagesChunk = "_next/static/chunks/1qtjvhdg3bxf_.js" // /docs/setup's, named only by _buildManifest.js
	runSplit(t, e, out, []string{inst + "/", inst + "/docs"}, []splitCase{
		{name: "the correct split deployment is admitted", code: 0},
		{name: "a public/ file the page shows deleted from the instance", dir: instDir, path: "tile.png",
			code: 1, kind: admission.KindAssetMissingOnInstance, subject: "tile.png", want: "instance"},
		{name: "a pages-router chunk only _buildManifest.js names deleted from the CDN", dir: cdnDir, path: pagesChunk,
			code: 1, kind: admission.KindAssetMissingOnCDN, subject: pagesChunk, want: "CDN"},
	})
}

// TestServedAngularFixture deploys the real Angular build (deployUrl
// https://cdn.example.test/ng/, @angular/pwa) as the oracle saw a browser
// use it: the page loads the app shell from the CDN, and the service
// worker, registered at the instance's scope, fetches ngsw.json and
// prefetches the same app shell from the instance. record says so
// (--instance-path for the worker and its manifest, --cdn-and-instance-path
// for the shell); a default admit of / admits the correct deployment, and
// refuses the service worker's manifest deleted from the instance, the
// main script deleted from the instance (the worker's copy) and the lazy
// chunk deleted from the CDN.
func TestServedAngularFixture(t *testing.T) {
	t.Parallel()
	instanceOnly := func(rel string) bool {
		return strings.HasPrefix(rel, "ngsw") || rel == "safety-worker.js" || rel == "worker-basic.min.js" ||
			rel == "index.html" || rel == "favicon.svg" || rel == "manifest.webmanifest" || rel == "robots.txt" || strings.HasPrefix(rel, "icons/")
	}
	shell := func(rel string) bool {
		return !strings.Contains(rel, "/") && !instanceOnly(rel) && (strings.HasSuffix(rel, ".js") || strings.HasSuffix(rel, ".css"))
	}
	out, inst, cdnDir, instDir, e := splitFixture(t, "angular", "https://cdn.example.test/ng", "ng",
		func(rel string) bool { return !instanceOnly(rel) },
		func(rel string) bool { return instanceOnly(rel) || shell(rel) },
		"--instance-path", "ngsw*", "--instance-path", "safety-worker.js", "--instance-path", "worker-basic.min.js",
		"--instance-path", "index.html", "--instance-path", "favicon.svg", "--instance-path", "manifest.webmanifest",
		"--instance-path", "robots.txt", "--instance-path", "icons",
		"--cdn-and-instance-path", "main-*.js", "--cdn-and-instance-path", "chunk-*.js", "--cdn-and-instance-path", "styles-*.css")
	m, _, err := manifest.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var main, lazy string
	for _, f := range m.Assets.Files {
		switch {
		case strings.HasPrefix(f.Path, "main-"):
			main = f.Path
		case strings.HasPrefix(f.Path, "chunk-UGKFDJOQ"):
			lazy = f.Path
		}
		if want := shell(f.Path); (f.Served == manifest.ServedCDNAndInstance) != want {
			t.Errorf("%s: served %q, want on both %v", f.Path, f.Served, want)
		}
	}
	runSplit(t, e, out, []string{inst + "/"}, []splitCase{
		{name: "the correct deployment is admitted", code: 0},
		{name: "the service worker's ngsw.json deleted from the instance", dir: instDir, path: "ngsw.json",
			code: 1, kind: admission.KindAssetMissingOnInstance, subject: "ngsw.json", want: "instance"},
		{name: "the main script deleted from the instance (the worker prefetches it there)", dir: instDir, path: main,
			code: 1, kind: admission.KindAssetMissingOnInstance, subject: main, want: "instance"},
		{name: "the lazy route's chunk deleted from the CDN", dir: cdnDir, path: lazy,
			code: 1, kind: admission.KindAssetMissingOnCDN, subject: lazy, want: "CDN"},
	})
}
