// Package probe fetches an instance's own pages and finds the static
// assets they reference, as asset IDs (paths relative to a CDN base).
//
// HTML is parsed into a tree with golang.org/x/net/html (as a browser
// parses it) and every element and attribute that makes a browser load a
// subresource is read (see [Extract]), by the table the asset graph reads
// too (internal/htmlrefs: TestProbeAndGraphAgree and FuzzAgree hold the
// two to the same files): script src; link href (and
// imagesrcset) where rel is stylesheet, preload, modulepreload, prefetch,
// icon, shortcut, apple-touch-icon, apple-touch-icon-precomposed,
// apple-touch-startup-image, mask-icon, fluid-icon or manifest; script data-src (the legacy entry of @vitejs/plugin-legacy,
// <script nomodule id="vite-legacy-entry" data-src="…">, which its inline
// code loads); img and source src and srcset, and data-src and
// data-srcset (what lazy-loading scripts move into them); video src and poster;
// audio, track, embed, iframe and frame src; input type=image src; object
// data; body, table, td and th background; html manifest; meta refresh,
// and the content of meta msapplication-TileImage and msapplication-config
// (which favicon plugins emit);
// the addresses of an import map (<script type=importmap>); in SVG, href
// and xlink:href on every element but <a> (script, image, use, feImage,
// paint servers) and url() in presentation attributes (fill, stroke,
// filter, mask, clip-path, markers, cursor); CSS in <style>, in every
// style attribute and in the stylesheets of the page's origin that Fetch
// reads in turn (url(), src(), @import, image-set() and image() strings),
// read with a CSS Syntax tokenizer (github.com/tdewolff/parse/v2/css).
// A custom element's URL-shaped attributes (Astro's component-url), a
// preload or prefetch as=fetch or as=document, a prerender and speculation
// rules are Optional references: the gate holds them to the manifest only
// when they name a file of the release ([Mapped].Maybe). srcset is split
// as HTML's algorithm splits it. An iframe's srcdoc and a noscript's
// content are parsed as documents of their own. The first <base href> is honoured. A fragment-only
// reference ("#x") is the document itself. Script code is not read: what
// a script fetches at run time is beyond a static probe.
//
// A probe proves something or refuses: Fetch follows a redirect only on
// the probed origin, and a body in a Content-Encoding it cannot decode or
// of a content type it cannot read (neither HTML nor JSON, a charset
// that is not ASCII-compatible, a stylesheet that is not text/css) is a
// *RefusalError.
//
// A probe whose answer is JSON (Content-Type application/json, or a body
// starting with '[' or '{' that is not HTML) is an asset list, in one of
// these shapes:
//
//	["js/app.1a2b.js", "https://cdn.example.com/css/site.css"]
//	{"assets": ["js/app.1a2b.js", ...]}
//
// or a bundler's list in a shape `lockstep record` reads (the same parser,
// manifest/assets.ListEntries): Vite's build manifest (.vite/manifest.json,
// every chunk's file, css and assets), webpack-manifest-plugin's and
// webpack-assets-manifest's maps, create-react-app's asset-manifest.json,
// assets-webpack-plugin's map. In a JSON list a bare relative string is an
// asset ID as it is; an absolute URL or an absolute path is mapped like an
// HTML reference. JSON in no shape of these (or not JSON at all, though
// served as JSON) is a *RefusalError (ReasonJSON): the instance answered,
// with something the gate can name as wrong.
//
// Mapping a reference (see [Map]): it is resolved against the page (or its
// <base>), its query and fragment dropped. Under a CDN base it is the path
// relative to that base (the longest base wins). On the page's own origin
// it is the path with the path of a CDN base stripped when it starts with
// one, else without its leading slash: an app that serves its assets
// itself is held to the manifest too, and [Mapped].Local lists such
// references with the base on the instance they are under (the gate checks
// them there as well). A reference to any other host is
// foreign: it cannot be checked against the manifest or the CDN, and is
// returned apart, never silently dropped (the admission check refuses it
// unless the host is allowed: a page that pulls a script from an unknown
// host is exactly what an attacker would make). data:, blob:, javascript:
// and mailto: references are not assets.
package probe
