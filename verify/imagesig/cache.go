package imagesig

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
)

// DefaultMaxEntries bounds a Cache when CacheOptions.MaxEntries is 0.
const DefaultMaxEntries = 10000

// CacheOptions configure a Cache.
type CacheOptions struct {
	// MaxEntries bounds the entries kept in memory and on disk (least
	// recently used first out); 0 is DefaultMaxEntries.
	MaxEntries int
	// Dir, when set, keeps entries on disk too (one small file each,
	// written atomically), so that a restarted process starts warm. The
	// directory must be writable only by lockstep: an entry there vouches
	// for a digest.
	Dir string
	// MaxAge, when set, expires entries older than it; 0 keeps them until
	// evicted (a digest's bytes never change, and the key names the trust
	// settings, so an entry stays true).
	MaxAge time.Duration
}

// Cache remembers which digests verified under which trust settings. Its
// keys are digests (with a fingerprint of the trust settings), never tags:
// a tag can move, a digest cannot. Only successes are cached. It is safe
// for concurrent use.
type Cache struct {
	opt   CacheOptions
	now   func() time.Time
	mu    sync.Mutex
	ll    *list.List // of *entry, most recent first
	items map[string]*list.Element
}

type entry struct {
	Key        string    `json:"key"`
	VerifiedAt time.Time `json:"verifiedAt"`
}

// NewCache returns a cache. With a Dir, it creates the directory and
// loads the newest MaxEntries entries from it, removing the rest.
func NewCache(o CacheOptions) (*Cache, error) {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	c := &Cache{opt: o, now: time.Now, ll: list.New(), items: map[string]*list.Element{}}
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("opening signature cache: %w", err)
		}
		if err := c.load(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cache) load() error {
	des, err := os.ReadDir(c.opt.Dir)
	if err != nil {
		return fmt.Errorf("opening signature cache: %w", err)
	}
	var entries []entry
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.opt.Dir, de.Name()))
		if err != nil {
			continue
		}
		var e entry
		if json.Unmarshal(b, &e) != nil || fileName(e.Key) != de.Name() {
			os.Remove(filepath.Join(c.opt.Dir, de.Name())) // not ours, or torn: forget it
			continue
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].VerifiedAt.After(entries[j].VerifiedAt) })
	for i, e := range entries {
		if i >= c.opt.MaxEntries || c.expired(e) {
			os.Remove(filepath.Join(c.opt.Dir, fileName(e.Key)))
			continue
		}
		e := e
		c.items[e.Key] = c.ll.PushBack(&e)
	}
	return nil
}

func (c *Cache) expired(e entry) bool {
	return c.opt.MaxAge > 0 && c.now().Sub(e.VerifiedAt) > c.opt.MaxAge
}

// Has reports whether key verified before (and has not expired).
func (c *Cache) Has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return false
	}
	if c.expired(*el.Value.(*entry)) {
		c.remove(el)
		return false
	}
	c.ll.MoveToFront(el)
	return true
}

// Add records that key verified now. A disk write that fails leaves the
// entry in memory only, and is returned.
func (c *Cache) Add(key string) error {
	e := &entry{Key: key, VerifiedAt: c.now().UTC()}
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		el.Value = e
		c.ll.MoveToFront(el)
	} else {
		c.items[key] = c.ll.PushFront(e)
	}
	for c.ll.Len() > c.opt.MaxEntries {
		c.remove(c.ll.Back())
	}
	c.mu.Unlock()
	if c.opt.Dir == "" {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(c.opt.Dir, fileName(key)), b, 0o600)
}

// remove drops el; c.mu is held.
func (c *Cache) remove(el *list.Element) {
	e := c.ll.Remove(el).(*entry)
	delete(c.items, e.Key)
	if c.opt.Dir != "" {
		// A file that cannot be removed is pruned at the next load.
		os.Remove(filepath.Join(c.opt.Dir, fileName(e.Key)))
	}
}

// Len returns the number of entries in memory.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

func fileName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:]) + ".json"
}
