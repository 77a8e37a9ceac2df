package manifest

import (
	"slices"
	"strings"
)

// What a digest is to an image, as Image.Identify says.
const (
	// MatchIndex: the index digest of a multi-platform image.
	MatchIndex = "index"
	// MatchManifest: the platform's image manifest digest (for a
	// single-platform image, the image's own digest).
	MatchManifest = "manifest"
	// MatchConfig: the platform's config digest (the image ID).
	MatchConfig = "config"
)

// Identify is the one rule of what identifies an image on a platform
// ("os/arch[/variant]"): the index digest (MatchIndex), the platform's
// manifest digest (MatchManifest) or the platform's config digest
// (MatchConfig), and nothing else. The index digest identifies the image
// only on a platform the index holds: an index pulled on a platform it
// does not hold runs nothing of the release. A single-platform image's
// digest is its platform's manifest digest, so it matches only on that
// platform. An empty platform stands for every platform.
//
// It returns "" for a digest that does not match; when that digest is one
// of another platform's, other is that platform (for messages).
func (im *Image) Identify(d Digest, platform string) (match string, other *Platform) {
	if d.IsZero() {
		return "", nil
	}
	on := func(p Platform) bool { return platform == "" || PlatformMatches(p, platform) }
	if d == im.Digest {
		single := len(im.Platforms) == 1 && im.Platforms[0].Digest == im.Digest
		if !single {
			if platform == "" || slices.ContainsFunc(im.Platforms, on) {
				return MatchIndex, nil
			}
			return "", nil
		}
		if on(im.Platforms[0]) {
			return MatchManifest, nil
		}
		return "", &im.Platforms[0]
	}
	for i, p := range im.Platforms {
		if d != p.Digest && d != p.Config {
			continue
		}
		if !on(p) {
			other = &im.Platforms[i]
			continue
		}
		if d == p.Digest {
			return MatchManifest, nil
		}
		return MatchConfig, nil
	}
	return "", other
}

// ParsePlatform parses "os/arch[/variant]" as a runtime reports it (no
// digests); ok is false for anything else.
func ParsePlatform(s string) (p Platform, ok bool) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
		return Platform{}, false
	}
	p.OS, p.Architecture = parts[0], parts[1]
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, true
}
