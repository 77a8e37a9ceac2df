package assets

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSHA256 is Go's single-core SHA-256 rate on 1 MiB blocks: the
// unit of the hashing limit (workers × this rate) in bench/hash.sh.
func BenchmarkSHA256(b *testing.B) {
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		sha256.Sum256(buf)
	}
}

// BenchmarkSHA256Parallel is the same on every core at once
// (GOMAXPROCS goroutines, each hashing its own buffer): what the machine
// delivers in place of the limit's "workers × one core", which vCPUs that
// share a physical core, or a host busy with other guests, may not give
// (bench/hash.sh's ceiling).
func BenchmarkSHA256Parallel(b *testing.B) {
	b.SetBytes(1 << 20)
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 1<<20)
		for pb.Next() {
			sha256.Sum256(buf)
		}
	})
}

// BenchmarkHash hashes a tree: $LOCKSTEP_BENCH_TREE if set (bench/hash.sh
// generates 1 GiB in 20,000 files), else 2,000 files of 52 KiB.
func BenchmarkHash(b *testing.B) {
	dir := os.Getenv("LOCKSTEP_BENCH_TREE")
	if dir == "" {
		dir = b.TempDir()
		buf := make([]byte, 52<<10)
		for i := range 2000 {
			p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%04d.js", i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			buf[0] = byte(i)
			if err := os.WriteFile(p, buf, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	r, err := Hash(context.Background(), Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(r.Bytes)
	b.ReportMetric(float64(len(r.Files)), "files")
	for b.Loop() {
		if _, err := Hash(context.Background(), Options{Dir: dir}); err != nil {
			b.Fatal(err)
		}
	}
}
