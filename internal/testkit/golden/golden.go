// Package golden compares test output with golden files in testdata, and
// rewrites them when the tests run with -update:
//
//	go test ./cmd/lockstep/app -run TestManifestGolden -update
//
// The -update flag is registered here once, so that any number of test
// files in a package can use golden files.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is -update: rewrite the golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Check compares got with testdata/name, or writes it there under -update.
// A missing file or a difference fails t.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
