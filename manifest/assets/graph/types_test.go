package graph

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

// build writes files into a directory, hashes it and builds its graph.
func build(t *testing.T, files map[string]string) (map[string][]string, *Result) {
	t.Helper()
	hashed, res, err := buildEntries(t, files, Options{CDN: []string{"https://cdn.example/app/"}})
	if err != nil {
		t.Fatal(err)
	}
	loads := map[string][]string{}
	for _, f := range hashed {
		loads[f.Path] = f.Loads
	}
	return loads, res
}

// TestFileTypesThatLoad: each type of file that makes a browser load
// others, read by its reader.
func TestFileTypesThatLoad(t *testing.T) {
	const png = "\x89PNG\r\n\x1a\n"
	tests := []struct {
		name  string
		files map[string]string
		from  string
		want  []string
	}{
		{"svg file: image, use, script, feImage, style", map[string]string{
			"logo.svg": `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><style>@import url(s.css);</style>` +
				`<image href="img/a.png"/><use xlink:href="sprite.svg#i"/><script href="/js/s.js"/><filter><feImage href="img/f.png"/></filter><rect style="fill:url(img/p.png)"/></svg>`,
			"s.css": "", "img/a.png": png, "sprite.svg": `<svg xmlns="http://www.w3.org/2000/svg"/>`, "js/s.js": "", "img/f.png": png, "img/p.png": png,
		}, "logo.svg", []string{"img/a.png", "img/f.png", "img/p.png", "js/s.js", "s.css", "sprite.svg"}},
		{"web app manifest", map[string]string{
			"app.webmanifest": `{"name":"x","start_url":"/index.html","icons":[{"src":"icons/192.png","sizes":"192x192"}],` +
				`"screenshots":[{"src":"/shots/wide.webp"}],"shortcuts":[{"name":"s","url":"/s.html","icons":[{"src":"icons/s.png"}]}]}`,
			"icons/192.png": png, "shots/wide.webp": "RIFF", "icons/s.png": png, "index.html": "<p>", "s.html": "<p>",
		}, "app.webmanifest", []string{"icons/192.png", "icons/s.png", "shots/wide.webp"}},
		{"manifest.json by its members", map[string]string{
			"manifest.json": `{"short_name":"x","icons":[{"src":"logo192.png"}],"start_url":"."}`, "logo192.png": png,
		}, "manifest.json", []string{"logo192.png"}},
		{"Angular's ngsw.json", map[string]string{
			"ngsw.json": `{"configVersion":1,"index":"/index.html","assetGroups":[{"name":"app","installMode":"prefetch","urls":["/main-AB.js","/styles-CD.css"]},` +
				`{"name":"assets","installMode":"lazy","urls":["/assets/i.png"]}],"dataGroups":[],"hashTable":{"/main-AB.js":"00","/media/f.woff2":"01"},"navigationUrls":[]}`,
			"index.html": "<p>", "main-AB.js": "", "styles-CD.css": "", "assets/i.png": png, "media/f.woff2": "wOF2",
		}, "ngsw.json", []string{"assets/i.png", "index.html", "main-AB.js", "media/f.woff2", "styles-CD.css"}},
		{"a Workbox precache manifest in the service worker", map[string]string{
			"sw.js":         `importScripts("workbox-1a.js");self.__WB_MANIFEST=[{"revision":"3","url":"index.html"},{"revision":null,"url":"assets/app-9f.js"}];workbox.precaching.precacheAndRoute(self.__WB_MANIFEST)`,
			"workbox-1a.js": "", "index.html": "<p>", "assets/app-9f.js": "",
		}, "sw.js", []string{"assets/app-9f.js", "index.html", "workbox-1a.js"}},
		{"other JSON: every string that names a file", map[string]string{
			"routes.json": `{"/":{"chunk":"js/home.js"},"list":["js/about.js", 3, null]}`, "js/home.js": "", "js/about.js": "",
		}, "routes.json", []string{"js/about.js", "js/home.js"}},
		{"browserconfig.xml", map[string]string{
			"browserconfig.xml": `<?xml version="1.0"?><browserconfig><msapplication><tile><square150x150logo src="/mstile-150.png"/><TileColor>#da532c</TileColor></tile></msapplication></browserconfig>`,
			"mstile-150.png":    png,
		}, "browserconfig.xml", []string{"mstile-150.png"}},
		{"an RSC payload", map[string]string{
			"index.txt":                    "1:I[4707,[\"static/chunks/app/page-1a.js\"],\"default\"]\n2:HL[\"/_next/static/css/a-2b.css\",\"style\"]\n",
			"static/chunks/app/page-1a.js": "", "_next/static/css/a-2b.css": "",
		}, "index.txt", []string{"_next/static/css/a-2b.css", "static/chunks/app/page-1a.js"}},
		{"base href in a page", map[string]string{
			"docs/index.html": `<base href="/v2/"><script src="app.js"></script><img src="../logo.png">`, "v2/app.js": "", "logo.png": png, "docs/app.js": "",
		}, "docs/index.html", []string{"logo.png", "v2/app.js"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loads, res := build(t, tt.files)
			if got := loads[tt.from]; !slices.Equal(got, tt.want) {
				t.Errorf("%s loads %q, want %q", tt.from, got, tt.want)
			}
			if len(res.Unread) > 0 {
				t.Errorf("Unread = %v, want none", res.Unread)
			}
		})
	}
}

// TestUnreadIsReported: a file whose loads the graph cannot know is
// reported, never taken as loading nothing; a leaf type is not.
func TestUnreadIsReported(t *testing.T) {
	_, res := build(t, map[string]string{
		"index.html":      "<p>",
		"app.jsx":         `import "./x.js"`,
		"CNAME":           "example.com",
		"broken.json":     `{"icons": [`,
		"broken.svg":      `<svg xmlns="http://www.w3.org/2000/svg"><image href="a.png">`,
		"bin.js":          "\x00\x01\x02",
		"a.png":           "\x89PNG",
		"font.woff2":      "wOF2",
		"app.wasm":        "\x00asm",
		"app.js.map":      `{"version":3}`,
		"notes.txt":       "hello",
		"bad.webmanifest": `not json`,
	})
	var got []string
	for _, u := range res.Unread {
		got = append(got, u.Path)
		if u.Reason == "" {
			t.Errorf("%s is unread with no reason", u.Path)
		}
	}
	want := []string{"CNAME", "app.jsx", "bad.webmanifest", "bin.js", "broken.json", "broken.svg"}
	if !slices.Equal(got, want) {
		t.Errorf("Unread = %v, want %q", res.Unread, want)
	}
}

// TestRootsAndUnreached: the closure's roots are every page; a file that
// no page reaches is listed.
func TestRootsAndUnreached(t *testing.T) {
	_, res := build(t, map[string]string{
		"index.html":       `<script src="js/app.js"></script>`,
		"about/index.html": `<link rel=stylesheet href="/css/about.css">`,
		"js/app.js":        `import("./lazy.js")`,
		"js/lazy.js":       "",
		"css/about.css":    `@font-face{src:url(../fonts/a.woff2)}`,
		"fonts/a.woff2":    "wOF2",
		"js/orphan.js":     "",
		"robots.txt":       "User-agent: *",
	})
	if want := []string{"about/index.html", "index.html", "robots.txt"}; !slices.Equal(res.Roots, want) {
		t.Errorf("Roots = %q, want %q", res.Roots, want)
	}
	if want := []string{"js/orphan.js"}; !slices.Equal(res.Unreached, want) {
		t.Errorf("Unreached = %q, want %q", res.Unreached, want)
	}
	a := &manifest.Assets{Files: []manifest.File{{Path: "a.HTM"}, {Path: "b.html"}, {Path: "c.js"}, {Path: "d/__next.d.__PAGE__.txt"}, {Path: "e.png"}}}
	if got := a.Roots(); strings.Join(got, " ") != "a.HTM b.html d/__next.d.__PAGE__.txt" {
		t.Errorf("Roots = %q", got)
	}
}
