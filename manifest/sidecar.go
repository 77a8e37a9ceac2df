package manifest

import "bytes"

// The files kept beside a manifest, in a directory, a store or at a URL:
// its cosign signature (MANIFEST.sig) and its Sigstore bundle
// (MANIFEST.sigstore.json).
const (
	SignatureSuffix = ".sig"
	BundleSuffix    = ".sigstore.json"
)

// Sidecar is one file kept beside a manifest: its suffix and its bytes
// (empty when the manifest has none).
type Sidecar struct {
	Suffix string
	Data   []byte
}

// Sidecars returns s's signature and bundle with the suffixes they are kept
// under, empty ones included, so that writers and deleters name the files
// the same way.
func (s *Signed) Sidecars() []Sidecar {
	return []Sidecar{{SignatureSuffix, s.Signature}, {BundleSuffix, s.Bundle}}
}

// SidecarSuffixes are the suffixes of every sidecar, for deleting them.
var SidecarSuffixes = []string{SignatureSuffix, BundleSuffix}

// CheckSidecars refuses a signature or bundle that is there but empty or
// only white space: that is an invalid signature, never "unsigned", and a
// store must not turn it into "unsigned" by dropping it. It returns a
// *ValidationError naming the sidecar.
func (s *Signed) CheckSidecars() error {
	for _, sc := range s.Sidecars() {
		if sc.Data != nil && Blank(sc.Data) {
			return invalid("", "the %s file beside the manifest is empty: an invalid signature (remove it to publish unsigned)", sc.Suffix)
		}
	}
	return nil
}

// Blank reports whether b holds nothing but white space.
func Blank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
