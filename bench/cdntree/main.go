// Command cdntree writes bench/cdn.sh's inputs in one pass: N generated
// assets (200 B to about 4 KiB, in 100 directories, named as a bundler
// names them, with a content hash: static/07/asset-000007.3f9a2b1c.js, so
// that a check trusts their headers as for a real build) under DIR/root, and
// for each BASE given, DIR/manifest-K.json (a release manifest listing
// every asset under that CDN base) and DIR/curl-K.conf (a curl config of
// the same URLs, for curl -K), K counting from 0. The tree is the same for
// a given N, run after run.
//
//	go run ./bench/cdntree -n 10000 DIR http://127.0.0.1:8080 https://127.0.0.1:8443
//
// It replaces an awk loop, sha256sum and stat over the tree, which took
// minutes for 100,000 assets.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

func main() {
	n := flag.Int("n", 10000, "number of assets")
	flag.Parse()
	if flag.NArg() < 2 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: cdntree [-n N] DIR BASE...")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *n, flag.Args()[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cdntree:", err)
		os.Exit(1)
	}
}

func run(dir string, n int, bases []string) error {
	files, err := writeTree(filepath.Join(dir, "root"), n)
	if err != nil {
		return err
	}
	for k, base := range bases {
		if err := writeManifest(filepath.Join(dir, fmt.Sprintf("manifest-%d.json", k)), base, files); err != nil {
			return err
		}
		if err := writeCurlConfig(filepath.Join(dir, fmt.Sprintf("curl-%d.conf", k)), base, files); err != nil {
			return err
		}
	}
	return nil
}

// writeTree writes n assets under root and returns them sorted by path
// (the names sort as they are generated: static/DD/asset-NNNNNN.HASH.js).
func writeTree(root string, n int) ([]manifest.File, error) {
	for d := range 100 {
		if err := os.MkdirAll(filepath.Join(root, "static", fmt.Sprintf("%02d", d)), 0o755); err != nil {
			return nil, err
		}
	}
	rng := rand.New(rand.NewPCG(42, 42))
	files := make([]manifest.File, n)
	buf := make([]byte, 200+3900)
	for i := range n {
		size := 200 + rng.IntN(3900)
		b := buf[:size]
		copy(b, fmt.Sprintf("/* %06d */", i))
		for j := 12; j < size; j++ {
			b[j] = 'a' + byte(j%26)
		}
		sum := sha256.Sum256(b)
		hexSum := hex.EncodeToString(sum[:])
		p := fmt.Sprintf("static/%02d/asset-%06d.%s.js", i%100, i, hexSum[:8]) // webpack's [name].[contenthash:8]
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), b, 0o644); err != nil {
			return nil, err
		}
		files[i] = manifest.File{Path: p, Size: int64(size), SHA256: hexSum}
	}
	// Sorted by path: directory first, then the asset's number.
	sortByPath(files)
	return files, nil
}

func sortByPath(files []manifest.File) {
	byDir := make([][]manifest.File, 100)
	for _, f := range files {
		d := (f.Path[len("static/")]-'0')*10 + f.Path[len("static/")+1] - '0'
		byDir[d] = append(byDir[d], f)
	}
	files = files[:0]
	for _, d := range byDir {
		files = append(files, d...)
	}
}

func writeManifest(path, base string, files []manifest.File) error {
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion,
		Kind:       manifest.Kind,
		Release:    manifest.Release{Name: "bench", Generation: 1, CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		Images:     []manifest.Image{},
		Assets:     manifest.Assets{CDN: []string{base}, Files: files, Fingerprint: manifest.Fingerprint(files)},
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func writeCurlConfig(path, base string, files []manifest.File) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	base = strings.TrimSuffix(base, "/")
	for _, file := range files {
		fmt.Fprintf(w, "url = \"%s/%s\"\noutput = \"/dev/null\"\n", base, file.Path)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
