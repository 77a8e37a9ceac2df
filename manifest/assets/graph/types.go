package graph

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/htmlrefs"
)

// The kinds of file the graph reads, by name (kind).
const (
	kindLeaf    = "leaf" // loads nothing
	kindUnknown = ""     // a type the graph cannot read: reported
	kindHTML    = "html" // internal/htmlrefs' table
	kindCSS     = "css"  // url(), @import
	kindJS      = "js"   // module specifiers and strings
	kindSVG     = "svg"  // an SVG document: htmlrefs' SVG table
	kindJSON    = "json" // a web app manifest, ngsw.json, or any JSON
	kindXML     = "xml"  // browserconfig.xml and other XML: every value
	kindText    = "text" // RSC payloads, LICENSE files: every token
	kindWebMan  = "webmanifest"
)

// leafTypes are the extensions of files that make a browser load nothing:
// images, fonts, audio and video, text tracks, WebAssembly (its imports
// come from the script that instantiates it), source maps (read by
// developer tools only), PDF, and the precompressed copies of other files
// (.gz, .br, .zst: a browser receives them decoded under the original's
// name). SVG is not a leaf: as a document (an <object>, an <iframe>, a
// navigation) it loads what it names.
var leafTypes = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".jfif": true, ".pjpeg": true, ".pjp": true, ".gif": true,
	".webp": true, ".avif": true, ".ico": true, ".cur": true, ".bmp": true, ".tif": true, ".tiff": true,
	".apng": true, ".jxl": true, ".heic": true, ".heif": true,
	".woff": true, ".woff2": true, ".ttf": true, ".otf": true, ".eot": true,
	".mp4": true, ".webm": true, ".ogg": true, ".ogv": true, ".oga": true, ".mp3": true, ".wav": true,
	".flac": true, ".m4a": true, ".m4v": true, ".aac": true, ".opus": true, ".mov": true, ".mkv": true,
	".vtt": true, ".srt": true,
	".wasm": true, ".map": true, ".pdf": true,
	".gz": true, ".br": true, ".zst": true,
}

// kind is how a file is read for references, by its name.
func kind(p string) string {
	ext := strings.ToLower(path.Ext(p))
	switch ext {
	case ".html", ".htm", ".xhtml":
		return kindHTML
	case ".css":
		return kindCSS
	case ".js", ".mjs", ".cjs":
		return kindJS
	case ".svg":
		return kindSVG
	case ".webmanifest":
		return kindWebMan
	case ".json":
		return kindJSON
	case ".xml":
		return kindXML
	case ".txt":
		return kindText
	}
	if leafTypes[ext] {
		return kindLeaf
	}
	return kindUnknown
}

// readable says whether files of kind k are read.
func readable(k string) bool { return k != kindLeaf && k != kindUnknown }

// svgRefs returns what an SVG file loads (htmlrefs.SVG); err says it is
// not well-formed, and what was read before the error is returned.
func svgRefs(p string, data []byte) ([]string, error) {
	d, err := htmlrefs.SVG(data)
	return docRefs(p, d), err
}

// webManifest is what of a web app manifest makes a browser load: the
// images of icons, screenshots and shortcuts, and a service worker named
// in it. start_url, scope, shortcuts' url and the other URLs are
// navigations, not subresources: a page the browser opens is a root of
// its own (every page of the release is).
type webManifest struct {
	Icons       []manifestImage `json:"icons"`
	Screenshots []manifestImage `json:"screenshots"`
	Shortcuts   []struct {
		Icons []manifestImage `json:"icons"`
	} `json:"shortcuts"`
	FileHandlers []struct {
		Icons []manifestImage `json:"icons"`
	} `json:"file_handlers"`
	ServiceWorker *struct {
		Src string `json:"src"`
	} `json:"serviceworker"`
}

type manifestImage struct {
	Src string `json:"src"`
}

// isWebManifest says whether a JSON object has a web app manifest's
// members.
func isWebManifest(top map[string]json.RawMessage) bool {
	for _, k := range []string{"icons", "start_url", "short_name", "display", "screenshots", "shortcuts", "theme_color"} {
		if _, ok := top[k]; ok {
			return true
		}
	}
	return false
}

// webManifestRefs returns the URLs a web app manifest loads (relative to
// the manifest's own URL, as the resolver takes them).
func webManifestRefs(data []byte) ([]string, error) {
	var m webManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	var out []string
	add := func(imgs []manifestImage) {
		for _, i := range imgs {
			out = append(out, i.Src)
		}
	}
	add(m.Icons)
	add(m.Screenshots)
	for _, s := range m.Shortcuts {
		add(s.Icons)
	}
	for _, f := range m.FileHandlers {
		add(f.Icons)
	}
	if m.ServiceWorker != nil {
		out = append(out, m.ServiceWorker.Src)
	}
	return out, nil
}

// ngswRefs returns what Angular's service worker fetches by its
// ngsw.json: the urls of every asset group (prefetched or lazy) and the
// keys of its hash table, and its index.
func ngswRefs(data []byte) ([]string, error) {
	var m struct {
		Index       string `json:"index"`
		AssetGroups []struct {
			URLs []string `json:"urls"`
		} `json:"assetGroups"`
		HashTable map[string]string `json:"hashTable"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	out := []string{m.Index}
	for _, g := range m.AssetGroups {
		out = append(out, g.URLs...)
	}
	return append(out, slices.Sorted(maps.Keys(m.HashTable))...), nil
}

// jsonRefs reads a JSON file: a web app manifest (.webmanifest, or JSON
// with a manifest's members) by its members, Angular's ngsw.json by its
// asset groups, and any other JSON by every string it holds (a list, a
// router manifest, data): the resolver keeps those that name a file of
// the release. JSON that does not parse is an error.
func jsonRefs(k string, data []byte) ([]string, error) {
	var top map[string]json.RawMessage
	objErr := json.Unmarshal(data, &top)
	switch {
	case k == kindWebMan || objErr == nil && isWebManifest(top):
		return webManifestRefs(data)
	case objErr == nil && top["configVersion"] != nil && (top["assetGroups"] != nil || top["hashTable"] != nil):
		return ngswRefs(data)
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				out = append(out, k) // a key may be a path too (ngsw's hashTable, build manifests)
				walk(v[k])
			}
		}
	}
	walk(v)
	return out, nil
}

// xmlRefs reads an XML file that is not SVG (browserconfig.xml, a feed)
// by every attribute value and every text it holds; the resolver keeps
// those that name a file of the release. XML that is not well-formed is
// an error, with what was read before it.
func xmlRefs(data []byte) ([]string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	var out []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			for _, a := range t.Attr {
				out = append(out, strings.TrimSpace(a.Value))
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(t)); s != "" {
				out = append(out, s)
			}
		}
	}
}

// textRefs reads a text file (a React Server Components payload, a
// license file) by every run of characters between white space, quotes,
// brackets and commas: the resolver keeps those that name a file of the
// release.
func textRefs(data []byte) []string {
	return strings.FieldsFunc(string(data), func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', '\f', '"', '\'', '`', ',', '[', ']', '{', '}', '(', ')', '<', '>':
			return true
		}
		return false
	})
}
