package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// fetchedObjects holds the immutable objects (platform manifests, image
// configs) that one Resolve fetched, by repository and digest, and fetches
// each once: a tag whose image shares its config or platform manifests with
// another tag of the same repository (one image under several tags and
// roles, the indexes of app:1.2 and app:latest) waits for the first fetch
// instead of sending its own. What it keeps hashes to its digest (checked
// again here, whatever the fetch verified), and it is keyed by repository
// too, so that every repository is still asked for the objects it is
// pinned to. A fetch that fails is not kept: each waiter then fetches for
// itself, so that every failure is its own reference's, as without it.
type fetchedObjects struct {
	mu sync.Mutex
	m  map[string]*objectFetch
}

// objectFetch is one fetch, done when done is closed.
type objectFetch struct {
	done chan struct{}
	b    []byte
	err  error
}

// get returns the object d of repository repo: kept, or in flight, or
// fetched now by fetch (and kept when it hashes to d).
func (o *fetchedObjects) get(repo string, d v1.Hash, fetch func() ([]byte, error)) ([]byte, error) {
	key := repo + "@" + d.String()
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string]*objectFetch{}
	}
	if f, ok := o.m[key]; ok {
		o.mu.Unlock()
		<-f.done
		if f.err == nil {
			return f.b, nil
		}
		return checked(d, fetch)
	}
	f := &objectFetch{done: make(chan struct{})}
	o.m[key] = f
	o.mu.Unlock()
	f.b, f.err = checked(d, fetch)
	if f.err != nil {
		o.mu.Lock()
		delete(o.m, key)
		o.mu.Unlock()
	}
	close(f.done)
	return f.b, f.err
}

// checked returns what fetch returns, if it hashes to d.
func checked(d v1.Hash, fetch func() ([]byte, error)) ([]byte, error) {
	b, err := fetch()
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); d.Algorithm != "sha256" || hex.EncodeToString(sum[:]) != d.Hex {
		return nil, &wrongBytesError{Want: d, Got: "sha256:" + hex.EncodeToString(sum[:])}
	}
	return b, nil
}

// wrongBytesError is an object whose bytes do not hash to its digest.
type wrongBytesError struct {
	Want v1.Hash
	Got  string
}

func (e *wrongBytesError) Error() string {
	return fmt.Sprintf("the registry's %s hashes to %s", e.Want, e.Got)
}
