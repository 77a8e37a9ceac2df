package filestore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
)

func newStore(t *testing.T) (*filestore.Store, string) {
	dir := t.TempDir()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st, dir
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) manifest.Store { st, _ := newStore(t); return st })
}

func TestCorrupt(t *testing.T) {
	storetest.RunCorrupt(t, func(t *testing.T) (manifest.Store, storetest.Raw) {
		st, dir := newStore(t)
		return st, storetest.Raw{
			Write: func(key string, data []byte) error { return os.WriteFile(filepath.Join(dir, key), data, 0o644) },
			Read:  func(key string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, key)) },
		}
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) manifest.Store {
		st, err := filestore.New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		return st
	})
}
