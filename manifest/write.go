package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/regfile"
)

// SidecarPaths say where WriteFile puts a manifest's sidecars: "" is
// beside the manifest (PATH.sig, PATH.sigstore.json, where FileSource
// reads them).
type SidecarPaths struct {
	Signature string
	Bundle    string
}

// WriteFile is the one writer of a manifest file and its sidecars: every
// command that writes one (record, sign, rollback --output, manifest get
// --output) calls it, so that they cannot drift. In one order:
//
//  1. every sidecar s carries (its signature, its bundle) at its path in
//     at, atomically each (internal/atomicfile);
//  2. unless the file at path already holds exactly s.Raw, every sidecar
//     beside path that step 1 did not write is removed: a signature or
//     bundle of the bytes being replaced (an unsigned record over a
//     signed manifest must not leave the old .sig beside the new file);
//  3. the manifest, atomically, last: it is the commit point, so a reader
//     who sees the new manifest sees its own sidecars and no stale one.
//
// When path already holds s.Raw (signing an existing file), the manifest
// is not rewritten and the sidecars beside it that s does not carry stay:
// they were there with those very bytes. A sidecar that is present but
// blank is refused (CheckSidecars) before anything is written. On an
// error a file is old or new, never a part, and no temporary file is
// left. It returns the sidecar paths written ("" for none).
func WriteFile(path string, s *Signed, at SidecarPaths) (SidecarPaths, error) {
	var out SidecarPaths
	if s == nil || len(s.Raw) == 0 {
		return out, errors.New("writing a manifest: no manifest")
	}
	if err := s.CheckSidecars(); err != nil {
		return out, err
	}
	targets := map[string]*string{SignatureSuffix: &out.Signature, BundleSuffix: &out.Bundle}
	wanted := map[string]string{SignatureSuffix: at.Signature, BundleSuffix: at.Bundle}
	for _, sc := range s.Sidecars() {
		if len(sc.Data) == 0 {
			continue
		}
		p := wanted[sc.Suffix]
		if p == "" {
			p = path + sc.Suffix
		}
		if p == path {
			return out, fmt.Errorf("writing %s: its %s would overwrite the manifest", path, sc.Suffix)
		}
		if err := atomicfile.Write(p, sc.Data, 0o644); err != nil {
			return out, err
		}
		*targets[sc.Suffix] = p
	}
	if old, err := regfile.ReadNoFollow(path, MaxSize); err == nil && bytes.Equal(old, s.Raw) {
		return out, nil
	}
	for _, suffix := range SidecarSuffixes {
		p := path + suffix
		if *targets[suffix] == p {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, fmt.Errorf("removing the stale %s: %w", p, err)
		}
	}
	return out, atomicfile.Write(path, s.Raw, 0o644)
}
