package app

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 11, classes 6 (the store's files), 7 (store URLs), 8 (numbers and
// text) and 9 (signatures): each case lays out a directory store as an
// attacker (or an accident) would, runs the real CLI, and asserts the
// refusal's exit code and what it says, that it came at once (a FIFO never
// hangs it), that no S3 endpoint was contacted, and that the store's tree
// is byte for byte what it was: nothing written, nothing deleted.

// tree is every entry under root: its type, mode and, for a regular
// file, a hash of its bytes (a FIFO is never opened).
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out[p] = "error " + err.Error()
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			v += " " + hex.EncodeToString(sum[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		out[p] = v
		return nil
	})
	return out
}

// TestStoreFileModes: a manifest and its sidecars get the same mode.
func TestStoreFileModes(t *testing.T) {
	t.Parallel()
	e := newAttackEnv(t)
	base := strings.TrimSuffix(e.manifestFile(1), ".json")
	var modes []string
	for _, p := range []string{base + ".json", base + ".sig", base + ".sigstore.json", e.rel("channels/production.json")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		modes = append(modes, fi.Mode().Perm().String())
	}
	for _, m := range modes[1:] {
		if m != modes[0] {
			t.Errorf("modes of the manifest, its signature, bundle and the pointer: %v, want one mode", modes)
		}
	}
}
