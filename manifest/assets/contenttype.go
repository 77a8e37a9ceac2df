package assets

import (
	"mime"
	"path"
	"strings"
)

// contentTypes are the types of the files a web build emits. They take
// precedence over mime.TypeByExtension, whose answer depends on the
// machine's mime.types files, so that the same tree gives the same
// manifest everywhere.
var contentTypes = map[string]string{
	".avif":        "image/avif",
	".css":         "text/css; charset=utf-8",
	".gif":         "image/gif",
	".htm":         "text/html; charset=utf-8",
	".html":        "text/html; charset=utf-8",
	".ico":         "image/vnd.microsoft.icon",
	".jpeg":        "image/jpeg",
	".jpg":         "image/jpeg",
	".js":          "text/javascript; charset=utf-8",
	".json":        "application/json",
	".map":         "application/json",
	".mjs":         "text/javascript; charset=utf-8",
	".otf":         "font/otf",
	".pdf":         "application/pdf",
	".png":         "image/png",
	".svg":         "image/svg+xml",
	".ttf":         "font/ttf",
	".txt":         "text/plain; charset=utf-8",
	".wasm":        "application/wasm",
	".webm":        "video/webm",
	".webmanifest": "application/manifest+json",
	".webp":        "image/webp",
	".woff":        "font/woff",
	".woff2":       "font/woff2",
	".xml":         "text/xml; charset=utf-8",
}

// ContentType returns the content type of an asset path from its
// extension: the table above first, then mime.TypeByExtension, and "" for
// an extension neither knows.
func ContentType(p string) string {
	ext := strings.ToLower(path.Ext(p))
	if ext == "" {
		return ""
	}
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	return mime.TypeByExtension(ext)
}
