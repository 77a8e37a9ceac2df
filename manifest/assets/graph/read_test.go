package graph

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestJSStrings(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"module specifiers", `import a from "./a.js"; import "./side.js"; export {b} from './b.js'; export * from "./c.js";
			const l = () => import("./lazy.js"); new Worker(new URL("./w.js", import.meta.url), {type: "module"})`,
			[]string{"./a.js", "./side.js", "./b.js", "./c.js", "./lazy.js", "./w.js", "module"}},
		{"template literal without substitutions, escapes", "import(`./t.js`); f(`./x${y}.js`); g(\"./e\\u0073c.js\", '\\x2fabs.js')",
			[]string{"./t.js", "./esc.js", "/abs.js"}},
		{"a regular expression holding a quote is not a string", `if (x) /"/.test(s); const u = "./after.js"`, []string{"./after.js"}},
		{"a division is not a regular expression", `a = b / 2 / c; const u = "./div.js"`, []string{"./div.js"}},
		{"comments are not code", `// import("./no.js")
			/* "./no2.js" */ const u = "./yes.js"`, []string{"./yes.js"}},
		{"SystemJS", `System.register(["./dep-legacy.js"], function(e, n) { n.import("./lazy-legacy.js") })`,
			[]string{"./dep-legacy.js", "./lazy-legacy.js"}},
		{"a template's fixed path before a computed query, stylesheets in strings", "f(`/a-1.js?v=${v}`, `/b/${n}.js`, 'x{background:url(/c.png)}', css`@import \"/d.css\";.e{src:url(${u})}`)",
			[]string{"/a-1.js?v=", "/c.png", "/d.css"}},
		{"short strings and text are left out, a name with a space is kept", `"use strict"; f("a", "x y.js", "ok.js", "Hello  world", " pad.js", "two words")`,
			[]string{"x y.js", "ok.js"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := jsStrings([]byte(tc.src))
			if !ok {
				t.Fatalf("the parser refused %q", tc.src)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("jsStrings(%q) = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

// TestJSLexerFallback: code the parser refuses is read by the lexer, which
// still finds the strings.
func TestJSLexerFallback(t *testing.T) {
	src := `import a from "./a.js"; let let let; const b = "./b.js"`
	got, ok := jsStrings([]byte(src))
	if ok {
		t.Fatalf("the parser took %q", src)
	}
	if want := []string{"./a.js", "./b.js"}; !slices.Equal(got, want) {
		t.Errorf("jsStrings(%q) = %q, want %q", src, got, want)
	}
	// The lexer takes what the parser takes from template literals and
	// stylesheets in strings.
	src = "let let let; f(`/a-1.js?v=${v}`, `/b/${n}.js`, 'x{background:url(/c.png)}', css`@import \"/d.css\";.e{src:url(${u})}`, \"my file.png\")"
	got, ok = jsStrings([]byte(src))
	if ok {
		t.Fatalf("the parser took %q", src)
	}
	if want := []string{"/a-1.js?v=", "/c.png", "/d.css", "my file.png"}; !slices.Equal(got, want) {
		t.Errorf("jsStrings(%q) = %q, want %q", src, got, want)
	}
}

// TestJSReadersAgreeOnFixtures: on every script of the real builds, the
// parser and the lexer find the same strings (the lexer's guess at a
// regular expression holds there), and the parser takes every one.
func TestJSReadersAgreeOnFixtures(t *testing.T) {
	for _, fx := range fixtures {
		dir := fixtureDir(fx.name)
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || kind(p) != "js" {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			parsed, ok := jsStrings(append([]byte(nil), data...))
			if !ok {
				t.Errorf("%s: the parser refused it", p)
			}
			lexed := jsLexStrings(data)
			slices.Sort(parsed)
			slices.Sort(lexed)
			if !slices.Equal(parsed, lexed) {
				t.Errorf("%s: the parser finds %d strings, the lexer %d", p, len(parsed), len(lexed))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestHTMLRefs(t *testing.T) {
	src := `<!doctype html><html><head>
<link rel="icon" href="/favicon.svg"><link rel="modulepreload" href="/assets/dep.js"><link rel="canonical" href="/page">
<link rel=stylesheet href=/assets/app.css><style>body{background:url(/assets/bg.png)}</style>
<script type="module" src="/assets/app.js"></script>
<script type="module">import("/assets/inline-lazy.js")</script>
<script nomodule id="vite-legacy-entry" data-src="/assets/legacy.js">System.import(x)</script>
<script type="importmap">{"imports": {"lib": "/assets/lib.js"}}</script>
<!-- <script src="/assets/commented.js"></script> -->
</head><body style="background:url('/assets/body.png')"><img src="/assets/a.png" srcset="/assets/a2.png 2x, /assets/a3.png 3x">
<p>/assets/text.js</p><a href="/other.html">x</a></body></html>`
	// The table's references in document order, then the inline
	// scripts' strings.
	want := []string{"/favicon.svg", "/assets/dep.js", "/assets/app.css", "/assets/bg.png", "/assets/app.js",
		"/assets/legacy.js", "/assets/lib.js", "/assets/body.png", "/assets/a.png", "/assets/a2.png", "/assets/a3.png", "/assets/inline-lazy.js"}
	if got := htmlRefs("index.html", []byte(src)); !slices.Equal(got, want) {
		t.Errorf("htmlRefs =\n%q\nwant\n%q", got, want)
	}
}

func TestResolve(t *testing.T) {
	r := newResolver([]string{"index.html", "assets/app.js", "assets/lazy.js", "assets/font.woff2", "js/main.8fce7357.js",
		"js/408.bdf92cd7.chunk.js", "js/408.bdf92cd7.chunk.js.map", "a b.png"}, "/static/", []string{"https://cdn.example/app/"})
	for _, tc := range []struct {
		from, ref, want string
	}{
		{"assets/app.js", "./lazy.js", "assets/lazy.js"},
		{"assets/app.js", "lazy.js?v=1#x", "assets/lazy.js"},
		{"assets/app.js", "/assets/font.woff2", "assets/font.woff2"},
		{"assets/app.js", "assets/font.woff2", "assets/font.woff2"}, // relative to the base (Vite's preload list)
		{"assets/app.js", "../index.html", "index.html"},
		{"index.html", "/static/js/main.8fce7357.js", "js/main.8fce7357.js"},
		{"js/main.8fce7357.js", "js/408.bdf92cd7.chunk.js", "js/408.bdf92cd7.chunk.js"}, // relative to the public path
		{"index.html", "https://cdn.example/app/assets/app.js", "assets/app.js"},
		{"index.html", "//cdn.example/app/assets/app.js", "assets/app.js"},
		{"index.html", "https://cdn.example/app/static/js/main.8fce7357.js", "js/main.8fce7357.js"},
		{"index.html", "/a%20b.png", "a b.png"},
		{"index.html", "https://elsewhere.example/assets/app.js", ""},
		{"index.html", "data:image/png;base64,AAAA", ""},
		{"index.html", "blob:https://cdn.example/x", ""},
		{"index.html", "#top", ""},
		{"assets/app.js", "./app.js", ""}, // itself
		{"index.html", "/assets/missing.js", ""},
	} {
		got, ok := r.resolve(tc.from, tc.ref)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("resolve(%q, %q) = %q, %v; want %q", tc.from, tc.ref, got, ok, tc.want)
		}
	}
	if got := r.hashes["bdf92cd7"]; !slices.Equal(got, []string{"js/408.bdf92cd7.chunk.js"}) {
		t.Errorf("hashes[bdf92cd7] = %q, want the chunk and not its source map", got)
	}
}

// TestJSLexerGuess: why the parser comes first. After ")" the lexer must
// guess between a division and a regular expression; it guesses division,
// reads the regular expression's quote as a string's start and loses the
// string after it. The parser knows an if's condition ended there.
func TestJSLexerGuess(t *testing.T) {
	src := `if (x) /"/.test(s); const u = "./after.js"`
	if got, _ := jsStrings([]byte(src)); !slices.Contains(got, "./after.js") {
		t.Errorf("parser: %q lacks ./after.js", got)
	}
	if got := jsLexStrings([]byte(src)); slices.Contains(got, "./after.js") {
		t.Errorf("lexer: %q has ./after.js: the test no longer shows the guess failing", got)
	}
}

func TestUnescapeJS(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a\/b`, "a/b"}, {`\x2fx`, "/x"}, {`\u0061`, "a"}, {`\u{1F600}`, "\U0001F600"}, {`a\
b`, "ab"}, {`\n\t`, "\n\t"}, {`\q`, "q"}, {`\xZZ`, "xZZ"}, {`end\`, `end\`},
	} {
		if got := unescapeJS(tc.in); got != tc.want {
			t.Errorf("unescapeJS(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
