package graph

import "github.com/lockstep-dev/lockstep/internal/cssurl"

// cssRefs returns the URLs a stylesheet loads: url(), src(), @import and
// the strings of image-set() and image(), read with a CSS Syntax tokenizer
// (internal/cssurl, the one the boot gate's probe uses).
func cssRefs(src []byte) []string {
	refs := cssurl.Refs(string(src))
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.URL
	}
	return out
}
