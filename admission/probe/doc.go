// Package probe fetches an instance's own pages and finds the static
// assets they reference, as asset IDs (paths relative to a CDN base).
//
// HTML is parsed with golang.org/x/net/html. The references read are:
// script src; link href (and imagesrcset) where rel is stylesheet,
// preload, modulepreload, prefetch, icon, shortcut, apple-touch-icon,
// apple-touch-icon-precomposed, mask-icon or manifest (but not a preload
// as=fetch or as=document: data, not assets); img src and srcset;
// source src and srcset; video src and poster; audio, track and embed
// src; input type=image src; object data. A <base href> is honoured.
// Inline CSS url() and scripts are not read.
//
// A probe whose answer is JSON (Content-Type application/json, or a body
// starting with '[' or '{' that is not HTML) is an asset list, in one of
// these shapes:
//
//	["js/app.1a2b.js", "https://cdn.example.com/css/site.css"]
//	{"assets": ["js/app.1a2b.js", ...]}
//	{"src/main.ts": {"file": "assets/main.1a2b.js", "css": ["assets/main.3c4d.css"], "assets": ["assets/logo.svg"]}}
//
// (the last is Vite's build manifest). In a JSON list a bare relative
// string is an asset ID as it is; an absolute URL or an absolute path is
// mapped like an HTML reference.
//
// Mapping a reference (see [Map]): it is resolved against the page (or its
// <base>), its query and fragment dropped. Under a CDN base it is the path
// relative to that base (the longest base wins). On the page's own origin
// it is the path with the path of a CDN base stripped when it starts with
// one, else without its leading slash: an app that serves its assets
// itself is held to the manifest too. A reference to any other host is
// foreign: it cannot be checked against the manifest or the CDN, and is
// returned apart, never silently dropped (the admission check refuses it
// unless the host is allowed: a page that pulls a script from an unknown
// host is exactly what an attacker would make). data:, blob:, javascript:
// and mailto: references are not assets.
package probe
