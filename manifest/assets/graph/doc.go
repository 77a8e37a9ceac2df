// Package graph draws the asset graph of a release: for every file of the
// asset set, the files of the same set it makes a browser load
// ([manifest.File.Loads], apiVersion lockstep.dev/v2), so that the boot
// gate can check on the CDN everything reachable from what a page
// references ((*manifest.Assets).Closure) without checking every asset.
//
// [Build] takes the edges from the bundlers' own lists where they say them
// (a Vite manifest's imports, dynamicImports, css and assets:
// [assets.List.Loads]) and reads the files where they do not:
//   - HTML by internal/htmlrefs, the one table of what makes a browser load
//     a subresource, which the boot gate's probe reads too (so the two
//     cannot disagree: admission/probe's TestProbeAndGraphAgree and
//     FuzzAgree): scripts, links, images and srcset as HTML splits it,
//     media, objects, inline SVG, CSS in <style> and style attributes,
//     import maps, noscript and srcdoc, custom elements' URL attributes,
//     with <base href> applied; and the inline scripts, as JavaScript;
//   - SVG files with an XML parser, by the same table (image, use,
//     script, feImage, styles);
//   - web app manifests (.webmanifest, or JSON with a manifest's members):
//     the icons of icons, screenshots, shortcuts and file handlers
//     (start_url is a navigation: its page is a root of its own);
//     Angular's ngsw.json: asset groups' urls, hashTable keys, index; any
//     other JSON by every string and key; XML (browserconfig.xml) by every
//     attribute and text; .txt (RSC payloads) by every token;
//   - CSS with a CSS Syntax tokenizer (internal/cssurl, the probe's):
//     url(), src(), @import, image-set();
//   - JavaScript with github.com/tdewolff/parse/v2/js's parser: module
//     specifiers (import, export … from, import()), new URL(…,
//     import.meta.url), worker URLs, SystemJS's System.register and
//     import, and every other string literal that names a file of the set
//     or holds the content hash in one's name (webpack's runtime names its
//     chunks from a table of ids and hashes; a name that is the hash
//     alone, mini-css-extract's "[contenthash].css", counts when the hash
//     is hex that mixes digits and letters); a template literal's fixed
//     path before a substitution in its query or fragment; a name with a
//     space, raw or %20; a name relative to the folder the bundle
//     runtime joins chunk names to (__webpack_require__.p, Next.js's
//     /_next/) or to the base (Vite's __vite__mapDeps, "assets/…"); and
//     the url()s and @imports of a stylesheet held in a string (Angular's
//     component styles, CSS in JS), read with the CSS tokenizer.
//
// The parser was measured against the same package's lexer alone
// (BenchmarkJSStrings): the lexer is about seven times faster (bench/graph.sh,
// interleaved, load 10.5: a 2.8 MB bundle in 36 against 275 ms at the
// median, 75 against 10 MB/s), but must guess whether a "/" starts
// a regular expression, and a wrong guess loses the strings after it
// (TestJSLexerGuess); the parser knows. At 10 MB/s a build's few megabytes of
// JavaScript cost record well under a second, on the hashing workers
// (Collector), each file read once. Code the parser refuses (syntax newer than
// it knows) is read with the lexer and named in [Result.Unparsed].
// esbuild's parser, the reference, is internal to its module and cannot be
// imported.
//
// Leaf types load nothing and are not read: images, fonts, audio and
// video, text tracks, .wasm, .map, .pdf, precompressed copies (see
// leafTypes). Any other file whose loads the graph cannot know (a type it
// does not read, a file that is not text or not well-formed, one over
// MaxRead) is in [Result].Unread with its reason, never taken as loading
// nothing. [Result].Roots are the files a gate's closure starts from
// (every page and RSC payload, and every entry file: manifest.Assets.Roots),
// and [Result].Unreached the files no root reaches; record reports both.
//
// Entry files are named outside HTML, by the bundler's own list, when a
// server renders the tags (Vite's backend integration, webpack with a
// server template): Vite's .vite/manifest.json (isEntry chunks, their
// file and css; dynamicImports reached from them by the list's edges),
// webpack's entrypoints (create-react-app's asset-manifest.json,
// webpack-assets-manifest, assets-webpack-plugin's named chunks),
// Next.js's build-manifest.json, and _buildManifest.js and _ssgManifest.js
// by their names. Each that no page reaches is marked manifest.File.Entry
// (one a page names is checked from the page, and the manifest stays
// lockstep.dev/v2); [Result].Entries says which list named each. A list that names a file the release
// does not hold, a path outside it or a URL under none of the CDN bases
// is refused (an *assets.Error), never followed. Angular's ngsw.json is
// read as the service worker's list (what it fetches are its loads, and
// the worker that fetches it reaches it); Angular's stats.json and
// Next's other .next/ manifests are build reports no browser loads, not
// shipped.
//
// A reference is resolved against the referring file, then against the
// public path and the CDN bases (as the browser would fetch it); one that
// names no file of the set (another host, a data: or blob: URI) is no
// edge, nor is a source map comment: browsers load maps only for their
// developer tools.
//
// What the graph cannot hold: a URL computed at run time from pieces that
// no literal holds (a name joined from parts, read from an API, a hash
// split in two) is invisible to a reading of the code
// (TestComputedURLIsNoEdge). The graph is what a build names; cdn check
// and admit --all-assets, which check every file, are the complete checks.
package graph
