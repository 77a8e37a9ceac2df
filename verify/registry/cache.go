package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// maxCached caps what the cache keeps and reads: image configs and
// manifests, never layers.
const maxCached = 4 << 20

// blobCache is a content-addressed cache of immutable registry objects
// (manifests, indexes, image configs) in a directory: DIR/sha256/HEX. What
// it returns is verified against its digest on every read, so a damaged
// or tampered file is a miss, never a wrong answer. DIR/tags holds empty
// files, one per tag resolved before (named by the hash of
// "repository:tag"): hints for asking with a HEAD first. A nil *blobCache
// caches nothing.
type blobCache struct{ dir string }

func newBlobCache(dir string) *blobCache {
	if dir == "" {
		return nil
	}
	return &blobCache{dir: dir}
}

func (c *blobCache) path(d v1.Hash) (string, bool) {
	if c == nil || d.Algorithm != "sha256" || len(d.Hex) != 64 {
		return "", false
	}
	if _, err := hex.DecodeString(d.Hex); err != nil {
		return "", false
	}
	return filepath.Join(c.dir, "sha256", d.Hex), true
}

// get returns the object with digest d, if cached and intact.
func (c *blobCache) get(d v1.Hash) ([]byte, bool) {
	p, ok := c.path(d)
	if !ok {
		return nil, false
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCached {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != d.Hex {
		os.Remove(p)
		return nil, false
	}
	return b, true
}

// seen reports whether the tag key ("repository:tag") was resolved with
// this cache before. It is a hint for how to ask, never an answer.
func (c *blobCache) seen(key string) bool {
	if c == nil {
		return false
	}
	_, err := os.Stat(c.tagPath(key))
	return err == nil
}

// markSeen records that the tag key was resolved.
func (c *blobCache) markSeen(key string) {
	if c == nil || c.seen(key) {
		return
	}
	p := c.tagPath(key)
	if os.MkdirAll(filepath.Dir(p), 0o700) == nil {
		os.WriteFile(p, nil, 0o600)
	}
}

func (c *blobCache) tagPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, "tags", hex.EncodeToString(sum[:]))
}

// put stores b as the object with digest d, if it is. Directories are
// 0700 and files 0600 (os.CreateTemp's mode): image configs can hold
// environment values. Errors are returned
// for logging only: a cache that cannot be written is no cache.
func (c *blobCache) put(d v1.Hash, b []byte) error {
	p, ok := c.path(d)
	if !ok || len(b) > maxCached {
		return nil
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != d.Hex {
		return fmt.Errorf("caching %s: content does not match", d)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	// No fsync: a torn file fails the digest check on read.
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), p)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
