package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

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
//
// Writes are off the pin's path: put and markSeen queue them for one
// writer goroutine and return, and what was put is served from memory for
// the rest of the run; close waits for the queue to be written.
type blobCache struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex
	written map[string][]byte // put in this run, by hex digest
	queue   chan func()
	done    chan struct{}
	dirs    map[string]bool // made in this run
}

func newBlobCache(dir string, log *slog.Logger) *blobCache {
	if dir == "" {
		return nil
	}
	return &blobCache{dir: dir, log: log, written: map[string][]byte{}, dirs: map[string]bool{}}
}

// later queues a write, starting the writer at the first.
func (c *blobCache) later(write func()) {
	c.mu.Lock()
	if c.queue == nil {
		q, done := make(chan func(), 256), make(chan struct{})
		c.queue, c.done = q, done
		go func() {
			defer close(done)
			for w := range q {
				w()
			}
		}()
	}
	q := c.queue
	c.mu.Unlock()
	q <- write
}

// close waits for every queued write; the cache is not used after.
func (c *blobCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	q, done := c.queue, c.done
	c.queue = nil
	c.mu.Unlock()
	if q != nil {
		close(q)
		<-done
	}
}

// mkdir makes dir (0700) once a run; it runs on the writer only.
func (c *blobCache) mkdir(dir string) error {
	if c.dirs[dir] {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	c.dirs[dir] = true
	return nil
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
	c.mu.Lock()
	mem, inMem := c.written[d.Hex]
	c.mu.Unlock()
	if inMem {
		return mem, true
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

// markSeen records that the tag key was resolved (queued: see close).
func (c *blobCache) markSeen(key string) {
	if c == nil || c.seen(key) {
		return
	}
	p := c.tagPath(key)
	c.later(func() {
		if c.mkdir(filepath.Dir(p)) == nil {
			os.WriteFile(p, nil, 0o600)
		}
	})
}

func (c *blobCache) tagPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, "tags", hex.EncodeToString(sum[:]))
}

// put stores b as the object with digest d, if it is: at once in memory
// for the rest of the run, on disk by the writer (close waits for it).
// Directories are 0700 and files 0600 (os.CreateTemp's mode): image
// configs can hold environment values. A write that fails is logged at
// debug level: a cache that cannot be written is no cache.
func (c *blobCache) put(d v1.Hash, b []byte) error {
	p, ok := c.path(d)
	if !ok || len(b) > maxCached {
		return nil
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != d.Hex {
		return fmt.Errorf("caching %s: content does not match", d)
	}
	c.mu.Lock()
	_, dup := c.written[d.Hex]
	c.written[d.Hex] = b
	c.mu.Unlock()
	if !dup {
		c.later(func() {
			if err := c.write(p, b); err != nil {
				c.log.Debug("not cached", "digest", d.String(), "err", err)
			}
		})
	}
	return nil
}

// write writes b to p through a temporary file and a rename; it runs on
// the writer only.
func (c *blobCache) write(p string, b []byte) error {
	if err := c.mkdir(filepath.Dir(p)); err != nil {
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
