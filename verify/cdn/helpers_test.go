package cdn

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sort"

	"github.com/lockstep-dev/lockstep/manifest"
)

// assets returns the manifest assets for files (path → bytes) at bases.
func assets(files map[string]string, bases ...string) manifest.Assets {
	a := manifest.Assets{CDN: bases}
	for p, b := range files {
		a.Files = append(a.Files, manifest.File{Path: p, Size: int64(len(b)), SHA256: sha(b)})
	}
	sort.Slice(a.Files, func(i, j int) bool { return a.Files[i].Path < a.Files[j].Path })
	a.Fingerprint = manifest.Fingerprint(a.Files)
	return a
}

func sha(b string) string {
	s := sha256.Sum256([]byte(b))
	return hex.EncodeToString(s[:])
}

func sha64(b string) string {
	s := sha256.Sum256([]byte(b))
	return base64.StdEncoding.EncodeToString(s[:])
}

// byPath indexes results by path.
func byPath(r *Report) map[string]Result {
	m := map[string]Result{}
	for _, res := range r.Results {
		m[res.Path] = res
	}
	return m
}
