package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

// probeAttackEnv is a real nginx CDN holding a release's assets and a
// real nginx app serving crafted pages, with the release's manifest.
type probeAttackEnv struct {
	app, appDir, cdn, manifest string
	// movedManifest's CDN base is a path of the CDN that redirects to
	// another origin.
	movedManifest string
	valid         string   // a page that references the release's assets
	assets        []string // the release's asset paths
	config        manifest.Digest
}

func newProbeAttackEnv(t *testing.T) probeAttackEnv {
	t.Helper()
	files := scenario.Assets("v1", 4)
	cdnDir, appDir := t.TempDir(), t.TempDir()
	if err := scenario.WriteFiles(cdnDir, files); err != nil {
		t.Fatal(err)
	}
	cdn := testenv.Nginx(t, cdnDir, "location /moved/ { return 302 http://localhost:$server_port$request_uri; }")
	valid := scenario.Page(cdn, scenario.Paths(files))
	// The app's crafted answers: content types, encodings and redirects
	// are set by nginx itself.
	pages := map[string]string{
		"index.html":      valid,
		"plain.txt":       valid,
		"blob.bin":        valid,
		"image.svg":       `<svg xmlns="http://www.w3.org/2000/svg"><image href="` + cdn + `/x.png"/></svg>`,
		"utf16.html":      "\xff\xfe" + valid,
		"br.html":         valid,
		"fakegzip.html":   valid,
		"deflate.html":    valid,
		"gzip.html":       valid,
		"gzipevil.html":   valid + `<script src="http://evil.example/x.js"></script>`,
		"utf16cs.html":    valid,
		"sheet.html":      valid + `<link rel=stylesheet href="/css/site.css">`,
		"sheet2.html":     valid + `<link rel=stylesheet href="/css/outer.css">`,
		"sheettxt.html":   valid + `<link rel=stylesheet href="/css/plain.css">`,
		"css/site.css":    `body { background: url("http://evil.example/bg.png") }`,
		"css/outer.css":   `@import "inner.css"; a{color:red}`,
		"css/inner.css":   `@font-face { font-family: x; src: url(//evil.example/f.woff2) }`,
		"css/plain.css":   `body{}`,
		"css/clean.css":   `body { background: url(` + cdn + `/` + scenario.Paths(files)[1] + `) }`,
		"cleansheet.html": valid + `<link rel=stylesheet href="/css/clean.css">`,
		"moved.html":      scenario.Page(cdn+"/moved", scenario.Paths(files)),
		"unknown.json":    `{"version": 3, "chunks": {}}`,
		"gone.json":       `{"files": {"main.js": "/js/gone.1a2b3c4d.js"}, "entrypoints": ["js/gone.1a2b3c4d.js"]}`,
	}
	for name, body := range pages {
		path := filepath.Join(appDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	app := testenv.Nginx(t, appDir,
		`location = /plain.txt { default_type text/plain; }`,
		`location = /utf16cs.html { charset_types text/html; charset utf-16; source_charset utf-16; override_charset off; types { } default_type "text/html; charset=utf-16"; }`,
		`location = /br.html { add_header Content-Encoding br; }`,
		`location = /deflate.html { add_header Content-Encoding deflate; }`,
		`location = /fakegzip.html { add_header Content-Encoding gzip; }`,
		`location ~ ^/gzip(evil)?\.html$ { gzip on; gzip_types text/html; gzip_min_length 1; }`,
		`location = /css/plain.css { types { } default_type text/plain; }`,
		`location = /old { return 301 /index.html; }`,
		`location = /chain { return 302 /away; }`,
		`location = /away { return 302 `+cdn+`/; }`,
		`location = /scheme { return 302 https://$host:$server_port/index.html; }`,
		`location = /hostname { return 302 http://localhost:$server_port/index.html; }`,
		`location = /metadata { return 302 http://169.254.169.254/latest/meta-data/; }`,
		`location = /moved-release.json { return 302 `+cdn+`/release.json; }`,
	)
	im, conf := webImage()
	_, raw, err := scenario.Manifest("store-web", 4, []manifest.Image{im}, []string{cdn + "/"}, files)
	if err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(t.TempDir(), "release.json")
	if err := os.WriteFile(mpath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, raw, err = scenario.Manifest("store-web", 4, []manifest.Image{im}, []string{cdn + "/moved/"}, files)
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "moved.json")
	if err := os.WriteFile(moved, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return probeAttackEnv{app: app, appDir: appDir, cdn: cdn, manifest: mpath, movedManifest: moved, valid: valid, assets: scenario.Paths(files), config: conf}
}

// admitPage runs admit against probe (and extra flags) and returns the
// exit code, the refusing finding kinds, and the state directory.
func (e probeAttackEnv) admitPage(t *testing.T, probe string, extra ...string) (int, []string, string, string) {
	t.Helper()
	code, d, state, stderr := e.admitDecision(t, probe, extra...)
	var kinds []string
	for _, f := range d.Refusals() {
		kinds = append(kinds, string(f.Kind))
	}
	return code, kinds, state, stderr
}

// admitDecision runs admit against probe (and extra flags) and returns the
// exit code, the decision it reported, the state directory and stderr.
func (e probeAttackEnv) admitDecision(t *testing.T, probe string, extra ...string) (int, admission.Decision, string, string) {
	t.Helper()
	dir := t.TempDir()
	state, report := filepath.Join(dir, "state"), filepath.Join(dir, "report.json")
	args := append([]string{"admit", "--manifest", e.manifest, "--release", "store-web", "--state-dir", state, "--insecure-allow-unsigned",
		"--image", "web", "--running", "digest:" + e.config.String(), "--platform", "linux/amd64",
		"--probe", probe, "--timeout", "20s", "--report", report}, extra...)
	code, _, stderr := run(t, args...)
	var d admission.Decision
	raw, err := os.ReadFile(report)
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	if err != nil {
		t.Fatalf("admit %q: no report (%v); exit %d, stderr:\n%s", probe, err, code, stderr)
	}
	return code, d, state, stderr
}

// stateWritten reports whether admit recorded a generation in dir.
func stateWritten(t *testing.T, dir string) bool {
	t.Helper()
	var n int
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n > 0
}

// pageAttack is one crafted page: inline HTML (written to a file of the
// app) or a path of the app's crafted answers.
type pageAttack struct {
	name  string
	html  string // inline: the valid page plus this
	alone bool   // html is the whole page
	path  string // or: this path of the app
	probe string // or: this URL
	args  []string
	code  int
	kind  string // the refusing finding kind wanted; "" with code 0
}

func TestAttackProbe(t *testing.T) {
	t.Parallel()
	e := newProbeAttackEnv(t)
	const evil = "http://evil.example"
	foreign := func(name, html string) pageAttack {
		return pageAttack{name: "class 4/foreign host in " + name, html: html, code: 1, kind: "asset-foreign-host"}
	}
	cases := []pageAttack{
		// A page that proves nothing.
		{name: "class 4/no asset: empty page", html: "<!doctype html><title>x</title>", alone: true, code: 1, kind: "probe-no-assets"},
		{name: "class 4/no asset: only links and a canonical", html: `<a href="/x">x</a><link rel=canonical href="/"><link rel=preconnect href="/">`, alone: true, code: 1, kind: "probe-no-assets"},
		{name: "class 4/no asset: only data and javascript URLs", html: `<img src="data:,x"><script src="javascript:void(0)"></script>`, alone: true, code: 1, kind: "probe-no-assets"},
		{name: "class 4/no asset: only fragments", html: `<svg><use href="#icon"/></svg><img src="#">`, alone: true, code: 1, kind: "probe-no-assets"},
		{name: "class 4/no asset: references inside an inline script", html: `<script>document.write('<script src="/js/a.js"><\/script>')</script>`, alone: true, code: 1, kind: "probe-no-assets"},
		{name: "class 4/no asset: declared asset-free page is accepted", html: "<!doctype html><p>maintenance</p>", args: []string{"--asset-free-page"}, alone: true, code: 0},

		// Every element and attribute that loads a subresource.
		foreign("script src", `<script src="`+evil+`/a.js"></script>`),
		foreign("upper-case SCRIPT SRC", `<SCRIPT SRC=`+evil+`/a.js></SCRIPT>`),
		foreign("module script", `<script type=module src="`+evil+`/m.js"></script>`),
		foreign("link stylesheet", `<link rel=stylesheet href="`+evil+`/s.css">`),
		foreign("link alternate stylesheet", `<link rel="alternate stylesheet" href="`+evil+`/s.css">`),
		foreign("link preload as style", `<link rel=preload as=style href="`+evil+`/s.css">`),
		foreign("link modulepreload", `<link rel=modulepreload href="`+evil+`/m.js">`),
		foreign("link icon", `<link rel=icon href="`+evil+`/i.png">`),
		foreign("link manifest", `<link rel=manifest href="`+evil+`/app.webmanifest">`),
		foreign("link imagesrcset", `<link rel=preload as=image imagesrcset="/a.png 1x, `+evil+`/b.png 2x">`),
		foreign("img src", `<img src="`+evil+`/i.png">`),
		foreign("img srcset", `<img src="x.png" srcset="`+evil+`/i.png 2x">`),
		foreign("picture source srcset", `<picture><source srcset="`+evil+`/i.webp"><img src="/x.png"></picture>`),
		foreign("video src", `<video src="`+evil+`/v.mp4"></video>`),
		foreign("video poster", `<video poster="`+evil+`/p.jpg"></video>`),
		foreign("video source src", `<video><source src="`+evil+`/v.webm"></video>`),
		foreign("audio src", `<audio src="`+evil+`/a.mp3"></audio>`),
		foreign("track src", `<video><track src="`+evil+`/t.vtt"></video>`),
		foreign("iframe src", `<iframe src="`+evil+`/f.html"></iframe>`),
		foreign("iframe srcdoc", `<iframe srcdoc="&lt;script src=&quot;`+evil+`/s.js&quot;&gt;&lt;/script&gt;"></iframe>`),
		foreign("embed src", `<embed src="`+evil+`/e.swf">`),
		foreign("object data", `<object data="`+evil+`/o.svg"></object>`),
		foreign("input type=image", `<input type=IMAGE src="`+evil+`/go.png">`),
		foreign("body background", `</head><body background="`+evil+`/bg.png">`),
		foreign("table and td background", `<table><tr><td background="`+evil+`/bg.png">x</td></tr></table>`),
		foreign("html manifest", `<html manifest="`+evil+`/app.appcache">`),
		foreign("meta refresh", `<meta http-equiv="Refresh" content="0; URL='`+evil+`/next'">`),
		foreign("import map imports", `<script type=importmap>{"imports": {"vue": "`+evil+`/vue.js"}}</script>`),
		foreign("import map scopes", `<script type=importmap>{"scopes": {"/a/": {"x": "`+evil+`/x.js"}}}</script>`),
		foreign("template content", `<template><script src="`+evil+`/t.js"></script></template>`),
		foreign("noscript content", `<noscript><img src="`+evil+`/n.png"></noscript>`),
		foreign("svg image href", `<svg><image href="`+evil+`/i.svg"/></svg>`),
		foreign("svg image xlink:href", `<svg xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="`+evil+`/i.svg"/></svg>`),
		foreign("svg use href", `<svg><use href="`+evil+`/sprite.svg#i"/></svg>`),
		foreign("svg script href", `<svg><script href="`+evil+`/s.js"></script></svg>`),
		foreign("svg feImage href", `<svg><filter><feImage href="`+evil+`/f.png"/></filter></svg>`),
		foreign("svg fill url()", `<svg><rect fill="url(`+evil+`/p.svg#g)"/></svg>`),
		foreign("style element url()", `<style>body{background:url(`+evil+`/bg.png)}</style>`),
		foreign("style element @import string", `<style>@import "`+evil+`/s.css";</style>`),
		foreign("style element @font-face src", `<style>@font-face{font-family:x;src:url('`+evil+`/f.woff2') format('woff2')}</style>`),
		foreign("style element image-set()", `<style>a{background-image:image-set("`+evil+`/a.png" 1x)}</style>`),
		foreign("style element escaped url(", `<style>a{background:\75 rl(`+evil+`/e.png)}</style>`),
		foreign("style element escape inside the URL", `<style>a{background:url("http://evil\2e example/e.png")}</style>`),
		foreign("style attribute", `<div style="background-image: url(&quot;`+evil+`/d.png&quot;)"></div>`),
		foreign("svg style attribute", `<svg><g style="mask:url(`+evil+`/m.svg#m)"/></svg>`),
		foreign("protocol-relative URL", `<script src="//evil.example/a.js"></script>`),
		foreign("backslashes a browser reads as slashes", `<script src="/\evil.example/a.js"></script>`),
		foreign("tab inside the scheme", "<script src=\"ht\ttp://evil.example/a.js\"></script>"),
		foreign("character references in the URL", `<script src="&#104;ttp://evil.example/a.js"></script>`),
		foreign("a base href that moves relative references", `<base href="`+evil+`/"><script src="a.js"></script>`),
		foreign("script data-src (Vite's legacy entry)", `<script nomodule id="vite-legacy-entry" data-src="`+evil+`/index-legacy.js">System.import(document.getElementById('vite-legacy-entry').getAttribute('data-src'))</script>`),
		foreign("img data-src (lazy loading)", `<img class=lazyload src="data:,x" data-src="`+evil+`/l.png">`),
		{name: "class 4/an asset on the instance's origin that it does not serve", html: `<script src="/` + e.assets[0] + `"></script>`, code: 1, kind: "asset-missing-on-instance"},
		{name: "class 4/foreign host allowed by --allow-host", html: `<style>body{background:url(` + evil + `/bg.png)}</style>`, args: []string{"--allow-host", "evil.example"}, code: 0},

		// Stylesheets of the instance's origin are read too.
		{name: "class 4/fetched stylesheet url()", path: "/sheet.html", code: 1, kind: "asset-foreign-host"},
		{name: "class 4/fetched stylesheet @import then @font-face", path: "/sheet2.html", code: 1, kind: "asset-foreign-host"},
		{name: "class 4/fetched stylesheet served as text/plain", path: "/sheettxt.html", code: 1, kind: "probe-unreadable"},
		{name: "class 4/a stylesheet of the instance the manifest lacks", path: "/cleansheet.html", code: 1, kind: "asset-not-in-manifest"},

		// Content types and encodings the probe cannot read.
		{name: "class 4/a JSON probe in no asset-list shape", path: "/unknown.json", code: 1, kind: "probe-unreadable"},
		{name: "class 4/a bundler's list naming a file the manifest lacks", path: "/gone.json", code: 1, kind: "asset-not-in-manifest"},
		{name: "class 4/content type text/plain", path: "/plain.txt", code: 1, kind: "probe-unreadable"},
		{name: "class 4/content type application/octet-stream", path: "/blob.bin", code: 1, kind: "probe-unreadable"},
		{name: "class 4/content type image/svg+xml", path: "/image.svg", code: 1, kind: "probe-unreadable"},
		{name: "class 4/charset utf-16", path: "/utf16cs.html", code: 1, kind: "probe-unreadable"},
		{name: "class 4/UTF-16 byte order mark", path: "/utf16.html", code: 1, kind: "probe-unreadable"},
		{name: "class 4/Content-Encoding br", path: "/br.html", code: 1, kind: "probe-unreadable"},
		{name: "class 4/Content-Encoding deflate", path: "/deflate.html", code: 1, kind: "probe-unreadable"},
		{name: "class 4/Content-Encoding gzip on a body that is not", path: "/fakegzip.html", code: 1, kind: "probe-unreadable"},
		{name: "class 4/real gzip is decoded and read", path: "/gzipevil.html", code: 1, kind: "asset-foreign-host"},
		{name: "class 4/real gzip of a valid page", path: "/gzip.html", code: 0},

		// Redirects.
		{name: "class 4/redirect on the origin is followed", path: "/old", code: 0},
		{name: "class 4/redirect to another origin", path: "/away", code: 1, kind: "redirect-off-origin"},
		{name: "class 4/redirect on the origin, then off it", path: "/chain", code: 1, kind: "redirect-off-origin"},
		{name: "class 4/redirect to another scheme", path: "/scheme", code: 1, kind: "redirect-off-origin"},
		{name: "class 4/redirect to another host name of the same address", path: "/hostname", code: 1, kind: "redirect-off-origin"},

		// Requests the gate sends.
		{name: "class 10/redirect to the metadata service", path: "/metadata", code: 1, kind: "redirect-off-origin"},
		{name: "class 10/probe of the EC2 metadata address", probe: "http://169.254.169.254/latest/meta-data/", code: 1, kind: "address-denied"},
		{name: "class 10/probe of the ECS credentials address", probe: "http://169.254.170.2/v2/credentials", code: 1, kind: "address-denied"},
		{name: "class 10/probe of a link-local address with a port", probe: "http://169.254.0.1:8080/", code: 1, kind: "address-denied"},
		{name: "class 10/probe of IPv6 link-local", probe: "http://[fe80::1]/", code: 1, kind: "address-denied"},
		{name: "class 10/probe of the EC2 IPv6 metadata address", probe: "http://[fd00:ec2::254]/", code: 1, kind: "address-denied"},
		{name: "class 10/probe of IPv4-mapped IPv6 metadata", probe: "http://[::ffff:169.254.169.254]/", code: 1, kind: "address-denied"},
		{name: "class 10/probe of IPv4-mapped IPv6 metadata in hex", probe: "http://[::ffff:a9fe:a9fe]/", code: 1, kind: "address-denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			probe := tc.probe
			switch {
			case tc.path != "":
				probe = e.app + tc.path
			case tc.html != "":
				probe = e.page(t, tc.html, tc.alone)
			}
			code, kinds, state, stderr := e.admitPage(t, probe, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; refusing kinds %q\n%s", code, tc.code, kinds, stderr)
			}
			if tc.kind != "" && !slices.Contains(kinds, tc.kind) {
				t.Errorf("refusing kinds %q, want %s", kinds, tc.kind)
			}
			if tc.code == 0 && len(kinds) > 0 {
				t.Errorf("admitted with refusing kinds %q", kinds)
			}
			if tc.code != 0 && stateWritten(t, state) {
				t.Errorf("a refused admit wrote trusted state under %s", state)
			}
		})
	}
	if n := len(cases); n < 50 {
		t.Errorf("%d cases, want at least 50", n)
	}
}

// page writes a page of the app, the valid page with html appended (or
// html alone), and returns its URL.
func (e probeAttackEnv) page(t *testing.T, html string, alone bool) string {
	t.Helper()
	body := e.valid + html
	if alone {
		body = html
	}
	f, err := os.CreateTemp(e.appDir, "page-*.html")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(body); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		t.Fatal(err)
	}
	return e.app + "/" + filepath.Base(f.Name())
}

// TestAttackRequests drives the requests the gate sends (class 10) from
// admit and fleet check against real nginx: none goes to a link-local or
// metadata address (each is refused before any connection), none follows
// a redirect to another origin.
func TestAttackRequests(t *testing.T) {
	t.Parallel()
	e := newProbeAttackEnv(t)
	admit := func(manifestURL string, extra ...string) []string {
		return append([]string{"admit", "--manifest", manifestURL, "--release", "store-web", "--insecure-allow-unsigned", "--image", "web",
			"--running", "digest:" + e.config.String(), "--platform", "linux/amd64", "--state-dir", filepath.Join(t.TempDir(), "state"),
			"--timeout", "20s", "--format", "json"}, extra...)
	}
	fleet := func(target string) []string {
		return []string{"fleet", "check", "--manifest", e.manifest, "--release", "store-web", "--insecure-allow-unsigned", "--format", "json", target}
	}
	cases := []struct {
		name string
		args []string
		code int
		kind string // a refusing finding kind (admit) or problem kind (fleet check)
	}{
		{"class 10/manifest URL on the EC2 metadata address", admit("https://169.254.169.254/latest/user-data"), 1, "address-denied"},
		{"class 10/manifest URL on IPv6 link-local", admit("https://[fe80::a9fe:a9fe]/release.json"), 1, "address-denied"},
		{"class 10/manifest URL on IPv4-mapped metadata", admit("https://[::ffff:169.254.169.254]/release.json"), 1, "address-denied"},
		{"class 10/manifest URL redirected to another origin", admit(e.app + "/moved-release.json"), 1, "redirect-off-origin"},
		{"class 10/CDN asset redirected to another origin", admit(e.movedManifest, "--probe", e.app+"/moved.html"), 1, "redirect-off-origin"},
		{"class 10/fleet check of the EC2 metadata address", fleet("http://169.254.169.254/v1/status"), 3, "request-refused"},
		{"class 10/fleet check of the EC2 IPv6 metadata address", fleet("http://[fd00:ec2::254]/v1/status"), 3, "request-refused"},
		{"class 10/fleet check of the ECS metadata address", fleet("http://169.254.170.2/v1/status"), 3, "request-refused"},
		{"class 10/fleet check redirected to another origin", fleet(e.app + "/away"), 3, "request-refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tc.code, out, stderr)
			}
			var report struct {
				Findings    []admission.Finding `json:"findings"`
				Unreachable []struct {
					Problem struct{ Kind string } `json:"problem"`
				} `json:"unreachable"`
			}
			if err := json.Unmarshal([]byte(out), &report); err != nil {
				t.Fatalf("no JSON report: %v\n%s", err, out)
			}
			var kinds []string
			for _, f := range report.Findings {
				if f.Severity == admission.Refuse {
					kinds = append(kinds, string(f.Kind))
				}
			}
			for _, u := range report.Unreachable {
				kinds = append(kinds, u.Problem.Kind)
			}
			if !slices.Contains(kinds, tc.kind) {
				t.Errorf("kinds %q, want %s", kinds, tc.kind)
			}
		})
	}
}
