package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Lockstep returns the path of a lockstep binary built from this checkout,
// for the tests that run it as a user would (the hook script, the
// quickstart, the Action, the agentless fleet).
//
// scripts/test.sh builds one before the tests and names it in
// $LOCKSTEP_TEST_BIN, so a run links the 84 MB binary once rather than
// once per package (about 6 CPU-seconds a link). Without it, as under a
// plain go test, the binary is built into one of t's temporary folders.
func Lockstep(t testing.TB) string {
	t.Helper()
	p, err := BuildLockstep(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// BuildLockstep is Lockstep for a TestMain: $LOCKSTEP_TEST_BIN when it is
// set, else a binary built into dir (which the caller removes).
func BuildLockstep(dir string) (string, error) {
	if p, ok, err := sharedLockstep(); ok || err != nil {
		return p, err
	}
	bin := filepath.Join(dir, "lockstep")
	// As a release is built (.goreleaser.yaml; bench/lib.sh's
	// build_lockstep, which scripts/test.sh uses): static (CGO_ENABLED=0),
	// -trimpath, without the symbol table and DWARF (-s -w, a quarter
	// smaller and quicker to link; no test reads them).
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "github.com/lockstep-dev/lockstep/cmd/lockstep")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building lockstep: %v\n%s", err, out)
	}
	return bin, nil
}

// sharedLockstep is $LOCKSTEP_TEST_BIN, which must name an executable.
func sharedLockstep() (string, bool, error) {
	p := os.Getenv("LOCKSTEP_TEST_BIN")
	if p == "" {
		return "", false, nil
	}
	if !filepath.IsAbs(p) {
		return "", true, fmt.Errorf("LOCKSTEP_TEST_BIN=%s: want an absolute path (the tests run in their packages' folders)", p)
	}
	if !isExec(p) {
		return "", true, fmt.Errorf("LOCKSTEP_TEST_BIN=%s is not an executable file: scripts/test.sh builds it with go build -o .cache/test-bin/lockstep ./cmd/lockstep", p)
	}
	return p, true, nil
}
