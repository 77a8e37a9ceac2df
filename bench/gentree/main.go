// Command gentree writes a deterministic tree of files for bench/hash.sh:
// N files totalling about SIZE bytes, with sizes spread from 1 KiB to
// about 20 times the mean (a web build's shape), in 100 directories.
//
//	go run ./bench/gentree -files 20000 -bytes 1073741824 DIR
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	files := flag.Int("files", 20000, "number of files")
	total := flag.Int64("bytes", 1<<30, "total size in bytes")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gentree [-files N] [-bytes N] DIR")
		os.Exit(2)
	}
	if err := generate(flag.Arg(0), *files, *total); err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
}

func generate(dir string, n int, total int64) error {
	rng := rand.New(rand.NewChaCha8([32]byte{'l', 'o', 'c', 'k', 's', 't', 'e', 'p'}))
	// Weights from an exponential distribution, scaled to the total.
	weights := make([]float64, n)
	var sum float64
	for i := range weights {
		weights[i] = rng.ExpFloat64()
		sum += weights[i]
	}
	buf := make([]byte, 0, 1<<20)
	var written int64
	for i, w := range weights {
		size := int64(w / sum * float64(total))
		if i == n-1 {
			size = max(total-written, 0)
		}
		size = max(size, 1024)
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("asset-%05d.js", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		for left := size; left > 0; {
			chunk := min(left, int64(cap(buf)))
			buf = buf[:chunk]
			for j := 0; j+8 <= len(buf); j += 8 {
				v := rng.Uint64()
				for k := range 8 {
					buf[j+k] = byte(v >> (8 * k))
				}
			}
			if _, err := f.Write(buf); err != nil {
				f.Close()
				return err
			}
			left -= chunk
		}
		if err := f.Close(); err != nil {
			return err
		}
		written += size
	}
	return nil
}
