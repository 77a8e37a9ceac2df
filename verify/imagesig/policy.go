package imagesig

import (
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
)

// IndexPolicy says which signatures an image index needs.
type IndexPolicy string

const (
	// EveryPlatform requires a signature on every platform manifest the
	// release runs; the index's own signature is not needed. The default.
	EveryPlatform IndexPolicy = "platforms"
	// IndexOnly accepts the index's signature alone.
	IndexOnly IndexPolicy = "index"
	// IndexAndPlatforms requires both.
	IndexAndPlatforms IndexPolicy = "all"
)

// ParseIndexPolicy parses "platforms", "index" or "all" ("" is
// "platforms").
func ParseIndexPolicy(s string) (IndexPolicy, error) {
	switch p := IndexPolicy(s); p {
	case "":
		return EveryPlatform, nil
	case EveryPlatform, IndexOnly, IndexAndPlatforms:
		return p, nil
	}
	return "", fmt.Errorf("image signature policy %q: want platforms, index or all", s)
}

// Policy says which digests of an image must carry a valid signature.
type Policy struct {
	// Index is the policy for an index; "" is EveryPlatform.
	Index IndexPolicy
	// Platforms are the platforms the release runs ("linux/amd64",
	// "linux/arm64/v8"). Empty means every platform of the image.
	Platforms []string
}

// Target is one digest a policy requires a signature on.
type Target struct {
	Digest manifest.Digest
	// What names it in messages: "index" or a platform "linux/amd64".
	What string
}

// Targets returns the digests of im that p requires signatures on. An
// image whose digest is a platform manifest itself (no index) needs its
// own signature under every policy. A Platforms list that names no
// platform of the image is an error: nothing would be checked.
func (p Policy) Targets(im *manifest.Image) ([]Target, error) {
	if !isIndex(im) {
		return []Target{{Digest: im.Digest, What: "image"}}, nil
	}
	var out []Target
	if p.Index == IndexOnly || p.Index == IndexAndPlatforms {
		out = append(out, Target{Digest: im.Digest, What: "index"})
	}
	if p.Index == IndexOnly {
		return out, nil
	}
	for _, pl := range im.Platforms {
		if p.runs(pl) {
			out = append(out, Target{Digest: pl.Digest, What: pl.String()})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("image %s: the policy's platforms %s are none of the image's", im.Name, strings.Join(p.Platforms, ", "))
	}
	return out, nil
}

func (p Policy) runs(pl manifest.Platform) bool {
	if len(p.Platforms) == 0 {
		return true
	}
	for _, want := range p.Platforms {
		if manifest.PlatformMatches(pl, want) {
			return true
		}
	}
	return false
}

// isIndex reports whether im's digest is an index rather than one image
// manifest.
func isIndex(im *manifest.Image) bool {
	if strings.Contains(im.MediaType, "index") || strings.Contains(im.MediaType, "manifest.list") {
		return true
	}
	return !(len(im.Platforms) == 1 && im.Platforms[0].Digest == im.Digest) && len(im.Platforms) > 0
}
