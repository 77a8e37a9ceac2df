package cdn

import (
	"github.com/lockstep-dev/lockstep/manifest"
	assetfiles "github.com/lockstep-dev/lockstep/manifest/assets"
)

// MaxUnhashedBytes is the largest file without a content hash in its name
// whose bytes a check downloads by default (16 MiB); a larger one keeps
// the header check.
const MaxUnhashedBytes = 16 << 20

// wantsBytes says whether a check compares f's bytes even without
// Options.Full: its name carries no content hash (assets.NameHash:
// robots.txt, favicon.svg, index.html), so a new build that changes it
// keeps its name, and a change at the same size slips past a header check
// where the CDN states no checksum. A hashed name changes with its bytes:
// the fast check holds. The name is all it goes by: a name that merely
// looks hashed (app.deadbeef.js) but is served with other bytes of the
// same size passes the header check (size, and a SHA-256 only where a
// header states one: Result.Compared says which); only Options.Full
// compares its bytes (TestUnhashedEveryBase).
func wantsBytes(f manifest.File) bool {
	return f.Size <= MaxUnhashedBytes && assetfiles.NameHash(f.Path) == ""
}
