package graph

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// buildDir writes files into a temporary directory, hashes it and builds
// its graph with opts (Dir set), and returns the files by path.
func buildDir(t *testing.T, files map[string]string, opts Options) map[string]manifest.File {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := assets.Hash(context.Background(), assets.Options{Dir: dir, PublicPath: opts.PublicPath})
	if err != nil {
		t.Fatal(err)
	}
	opts.Dir = dir
	if _, err := Build(context.Background(), h.Files, opts); err != nil {
		t.Fatal(err)
	}
	out := map[string]manifest.File{}
	for _, f := range h.Files {
		out[f.Path] = f
	}
	return out
}

// TestStringsTheReaderSkipped is the table of issue 34's class 4: the
// plain references of real bundles that the JavaScript reader skipped,
// each beside the near miss that must stay no edge (text that resembles a
// path but names no file of the release, or a path computed at run time).
func TestStringsTheReaderSkipped(t *testing.T) {
	cdn := []string{"https://cdn.example/app/"}
	for _, tc := range []struct {
		name  string
		files map[string]string
		opts  Options
		from  string
		want  []string
	}{
		{
			name: "a template literal whose substitutions are only in the query or fragment",
			files: map[string]string{
				"assets/app.js": "f(`/assets/a-1f3cab88.js?v=${v}`); g(`./b.js#${h}`); h(`/assets/c.js?${q}&x=1`);" +
					"i(`/assets/${name}.js?v=${v}`); j(`/assets/missing.js?v=${v}`)",
				"assets/a-1f3cab88.js": "", "assets/b.js": "", "assets/c.js": "", "assets/d.js": "",
			},
			from: "assets/app.js",
			want: []string{"assets/a-1f3cab88.js", "assets/b.js", "assets/c.js"},
		},
		{
			name: "a template literal with a substitution in the path is computed: no edge",
			files: map[string]string{
				"assets/app.js": "f(`/assets/${n}.js`); g(`/assets/d${n}?v=1`); h(`./d.js${q}`)",
				"assets/d.js":   "",
			},
			from: "assets/app.js",
			want: nil,
		},
		{
			name: "a file name with a space, raw and percent-encoded, and other characters a URL encodes",
			files: map[string]string{
				"assets/app.js":        `f("/assets/my font.woff2"); g("/assets/hero%20image.png"); h("./caf%C3%A9.svg"); i("./(1).png"); j("two words")`,
				"assets/my font.woff2": "", "assets/hero image.png": "", "assets/café.svg": "", "assets/(1).png": "",
			},
			from: "assets/app.js",
			want: []string{"assets/(1).png", "assets/café.svg", "assets/hero image.png", "assets/my font.woff2"},
		},
		{
			name: "webpack: chunk names relative to __webpack_require__.p, in a folder that is not the public path",
			files: map[string]string{
				"build/runtime.js":      `__webpack_require__.p = "/build/"; __webpack_require__.u = (id) => "js/" + id + ".js"; load("js/chunk.js")`,
				"build/js/chunk.js":     "",
				"build/js/unrelated.js": "",
			},
			from: "build/runtime.js",
			want: []string{"build/js/chunk.js"},
		},
		{
			name: "Next.js: static/chunks/… joined to r.p = assetPrefix + /_next/ on the CDN, from another file",
			files: map[string]string{
				"_next/static/chunks/webpack-1f3cab88e0.js":           `r.p="https://cdn.example/app/_next/",r.u=e=>"static/chunks/"+e+"."+{12:"9a8b7c6d5e4f3a2b"}[e]+".js"`,
				"_next/static/b1d/_buildManifest.js":                  `self.__BUILD_MANIFEST={"/about":["static/chunks/pages/about-4f3a2b1c0d9e8f7a.js"],"/x":["static/css/7e6d5c4b3a291807.css"]}`,
				"_next/static/chunks/pages/about-4f3a2b1c0d9e8f7a.js": "",
				"_next/static/chunks/12.9a8b7c6d5e4f3a2b.js":          "",
				"_next/static/css/7e6d5c4b3a291807.css":               "",
			},
			opts: Options{CDN: cdn},
			from: "_next/static/b1d/_buildManifest.js",
			want: []string{"_next/static/chunks/pages/about-4f3a2b1c0d9e8f7a.js", "_next/static/css/7e6d5c4b3a291807.css"},
		},
		{
			name: "Next.js without a runtime in the set: /_next/ is the folder the build writes",
			files: map[string]string{
				"index.html.js": `self.__next_f.push([1,"static/chunks/app/page-0a1b2c3d4e5f6a7b.js"])`,
				"_next/static/chunks/app/page-0a1b2c3d4e5f6a7b.js": "",
			},
			from: "index.html.js",
			want: []string{"_next/static/chunks/app/page-0a1b2c3d4e5f6a7b.js"},
		},
		{
			name: "a runtime base that is not a folder of the set, or another host's, adds nothing",
			files: map[string]string{
				"a/runtime.js": `r.p="https://elsewhere.example/js/"; s.p="/nowhere/"; load("x.js")`,
				"js/x.js":      "",
			},
			opts: Options{CDN: cdn},
			from: "a/runtime.js",
			want: nil,
		},
		{
			name: "Vite: __vite__mapDeps's list and base-relative assets/…, the build under a base",
			files: map[string]string{
				"assets/index-B4TPZJfM.js":   `const __vite__mapDeps=(i,m=__vite__mapDeps,d=(m.f||(m.f=["assets/Report-mWOfxOXy.js","assets/Report-Cu73fR1L.css"])))=>i.map(i=>d[i]);`,
				"assets/Report-mWOfxOXy.js":  "",
				"assets/Report-Cu73fR1L.css": "",
			},
			opts: Options{CDN: cdn, PublicPath: "/app/"},
			from: "assets/index-B4TPZJfM.js",
			want: []string{"assets/Report-Cu73fR1L.css", "assets/Report-mWOfxOXy.js"},
		},
		{
			name: "webpack's miniCssF where the whole stem is the hash, and a date-like name that is no hash",
			files: map[string]string{
				"js/main.8fce7357.js":  `r.miniCssF=e=>"css/"+{408:"1f3cab88e0a7",857:"20261202"}[e]+".css"`,
				"css/1f3cab88e0a7.css": "",
				"css/20261202.css":     "",
			},
			from: "js/main.8fce7357.js",
			want: []string{"css/1f3cab88e0a7.css"},
		},
		{
			name: "Angular component styles: a stylesheet in a string goes through the CSS tokenizer",
			files: map[string]string{
				"main-ABCDEF12.js":       `e.ɵcmp=Y({type:e,selectors:[["app-root"]],styles:['@font-face{font-family:F;src:url("./media/f-QWERTY12.woff2") format("woff2")}.h{background:url(media/hero-ZXCVBN34.png)}','/*# url(media/nope.png) */']})`,
				"media/f-QWERTY12.woff2": "", "media/hero-ZXCVBN34.png": "", "media/nope.png": "",
			},
			from: "main-ABCDEF12.js",
			want: []string{"media/f-QWERTY12.woff2", "media/hero-ZXCVBN34.png"},
		},
		{
			name: "CSS in JS: a template literal stylesheet, its fixed url() taken, the computed one not",
			files: map[string]string{
				"assets/app.js":     "const s = css`.a{background:url(/assets/bg.png)} .b{background:url(${x})} @import \"/assets/more.css\";`",
				"assets/bg.png":     "",
				"assets/more.css":   "",
				"assets/hidden.png": "",
			},
			from: "assets/app.js",
			want: []string{"assets/bg.png", "assets/more.css"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := buildDir(t, tc.files, tc.opts)
			f, ok := files[tc.from]
			if !ok {
				t.Fatalf("%s was not recorded", tc.from)
			}
			if !slices.Equal(f.Loads, tc.want) {
				t.Errorf("%s loads %q, want %q", tc.from, f.Loads, tc.want)
			}
		})
	}
}

// TestFrameworkFixturesReached: on the real Next.js (Turbopack, assetPrefix
// on a CDN) and Angular builds, the strings of class 4 put in the graph
// what the pages load: every file of Next.js's _next/ folder that some file
// of the release names is reached from the HTML pages (the pages router's
// chunks only through _buildManifest.js's "static/chunks/…", relative to
// the runtime's /_next/), and Angular's lazy component reaches the font and
// image its component styles name. A file that no file names (loaded by a
// URL the runtime computes) is left out, and the test says which.
func TestFrameworkFixturesReached(t *testing.T) {
	for _, fx := range []struct {
		name, cdn string
		must      func(p string) bool
	}{
		{"nextjs", "https://cdn.example.test/next/", func(p string) bool { return strings.HasPrefix(p, "_next/") }},
		{"angular", "https://cdn.example.test/ng/", func(p string) bool {
			return strings.HasPrefix(p, "media/") || strings.HasSuffix(p, ".js") && !strings.Contains(p, "worker") || strings.HasSuffix(p, ".css")
		}},
	} {
		t.Run(fx.name, func(t *testing.T) {
			dir := fixtureDir(fx.name)
			h, err := assets.Hash(context.Background(), assets.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Build(context.Background(), h.Files, Options{Dir: dir, CDN: []string{fx.cdn}}); err != nil {
				t.Fatal(err)
			}
			var roots []string
			bodies := map[string][]byte{}
			for _, f := range h.Files {
				if strings.HasSuffix(f.Path, ".html") {
					roots = append(roots, f.Path)
				}
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
				if err != nil {
					t.Fatal(err)
				}
				bodies[f.Path] = b
			}
			closure := (&manifest.Assets{Files: h.Files}).Closure(roots)
			for _, f := range h.Files {
				if !fx.must(f.Path) || slices.Contains(closure, f.Path) {
					continue
				}
				named := ""
				for p, b := range bodies {
					if p != f.Path && strings.Contains(string(b), path.Base(f.Path)) {
						named = p
					}
				}
				if named != "" {
					t.Errorf("%s is named in %s but not reached from the pages", f.Path, named)
				} else {
					t.Logf("%s is named by no file of the release: loaded, if at all, by a computed URL", f.Path)
				}
			}
		})
	}
}
