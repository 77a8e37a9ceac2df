// Package htmlrefs is the one table of what makes a browser load a
// subresource from an HTML document or an SVG file, read by both the boot
// gate's probe (admission/probe) and the asset graph
// (manifest/assets/graph), so that the two cannot disagree on what a page
// loads (admission/probe's TestProbeAndGraphAgree and FuzzAgree hold
// them to it).
//
// The table, for HTML parsed as a browser parses it (golang.org/x/net/html):
//   - script src, and data-src (@vitejs/plugin-legacy's entry);
//   - link href and imagesrcset where rel is stylesheet, preload,
//     modulepreload, prefetch, icon, shortcut, apple-touch-icon(-precomposed),
//     apple-touch-startup-image, mask-icon, fluid-icon or manifest; a
//     preload or prefetch as=fetch or as=document, a prerender and a
//     compression dictionary are Maybe;
//   - img and source src, srcset, data-src, data-srcset (lazy loaders);
//     video src and poster; audio, track, embed, frame and iframe src;
//     input type=image src; object data; body, table, td and th
//     background; html manifest;
//   - meta refresh (decided: the page it names is loaded next, a load of
//     that page and what it loads) and meta msapplication-TileImage and
//     msapplication-config;
//   - import maps' addresses; speculation rules' urls (Maybe);
//   - in SVG (inline or a file): href and xlink:href on every element but
//     <a> (image, use, script, feImage, paint servers), <style> and style
//     attributes, and url() in the presentation attributes;
//   - CSS in <style> and in every style attribute, through the CSS Syntax
//     tokenizer of internal/cssurl (url(), src(), @import, image-set());
//   - a custom element's (a name with a dash: an Astro island, a web
//     component) attributes whose value is shaped like a URL (a "/" or a
//     file extension, no white space, not JSON): Maybe, kept by a reader
//     when it names a file of the release;
//   - an iframe's srcdoc and a noscript's content, as documents of their
//     own (nested at most four deep).
//
// The first <base href> in tree order applies to every relative reference
// of the document. srcset is split as HTML's "parse a srcset attribute"
// splits it (Srcset). Navigations (a href, area href, form action) are no
// loads. Inline script code is returned apart (Doc.Scripts), for a reader
// of JavaScript.
package htmlrefs
