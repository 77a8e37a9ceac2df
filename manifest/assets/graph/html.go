package graph

import (
	"bytes"
	"encoding/json"
	"strings"

	"golang.org/x/net/html"
)

// linkRels are the link relations whose href a browser loads.
var linkRels = map[string]bool{
	"stylesheet": true, "preload": true, "modulepreload": true, "prefetch": true, "icon": true,
	"shortcut": true, "apple-touch-icon": true, "apple-touch-icon-precomposed": true,
	"mask-icon": true, "manifest": true,
}

// htmlRefs returns what an HTML document makes a browser load: script src
// and data-src (the legacy plugins' <script nomodule data-src>), link href
// and imagesrcset for the relations in linkRels, img, source, video,
// audio, track, embed and iframe src and srcset, video poster, object
// data, CSS in <style> and style attributes (url(), @import), the code of
// inline scripts (read as JavaScript: their imports and URLs) and the
// addresses of an import map. The document is tokenized as a browser does
// (golang.org/x/net/html), so a reference in a comment or in the text of
// another element is not one.
func htmlRefs(src []byte) []string {
	z := html.NewTokenizer(bytes.NewReader(src))
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	var inScript, inStyle, importMap bool
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return out
		case html.TextToken:
			// A copy: the JavaScript parser's input writes a NUL after
			// the bytes it is given, which would land in the tokenizer's
			// buffer.
			text := bytes.Clone(z.Text())
			switch {
			case inScript && importMap:
				out = append(out, importMapURLs(text)...)
			case inScript:
				js, _ := jsStrings(text)
				out = append(out, js...)
			case inStyle:
				for _, u := range cssRefs(text) {
					add(u)
				}
			}
		case html.EndTagToken:
			inScript, inStyle = false, false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if _, dup := attrs[string(k)]; !dup {
					attrs[string(k)] = string(v) // the first one wins, as in a browser
				}
			}
			tag := string(name)
			for _, u := range cssRefs([]byte(attrs["style"])) {
				add(u)
			}
			switch tag {
			case "script":
				add(attrs["src"])
				add(attrs["data-src"])
				_, hasSrc := attrs["src"]
				inScript = !hasSrc && tt == html.StartTagToken
				importMap = strings.EqualFold(strings.TrimSpace(attrs["type"]), "importmap")
			case "style":
				inStyle = tt == html.StartTagToken
			case "link":
				for _, rel := range strings.Fields(strings.ToLower(attrs["rel"])) {
					if linkRels[rel] {
						add(attrs["href"])
						out = append(out, srcset(attrs["imagesrcset"])...)
						break
					}
				}
			case "img", "source", "video", "audio", "track", "embed", "iframe", "input":
				add(attrs["src"])
				add(attrs["poster"])
				out = append(out, srcset(attrs["srcset"])...)
			case "object":
				add(attrs["data"])
			}
		}
	}
}

// srcset returns the URLs of a srcset attribute ("a.png 1x, b.png 2x").
func srcset(v string) []string {
	var out []string
	for _, c := range strings.Split(v, ",") {
		if f := strings.Fields(c); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// importMapURLs returns the addresses of an import map's imports and
// scopes.
func importMapURLs(text []byte) []string {
	var m struct {
		Imports map[string]string            `json:"imports"`
		Scopes  map[string]map[string]string `json:"scopes"`
	}
	if json.Unmarshal(text, &m) != nil {
		return nil
	}
	var out []string
	for _, u := range m.Imports {
		out = append(out, u)
	}
	for _, s := range m.Scopes {
		for _, u := range s {
			out = append(out, u)
		}
	}
	return out
}
