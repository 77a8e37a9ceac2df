package scripts

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLintCacheKey tries to make the lint cache read back a clean report
// it must not: another package, another linter version, another
// rpmlintrc; and checks that only the clone's path does not count.
func TestLintCacheKey(t *testing.T) {
	t.Setenv("LOCKSTEP_CACHE", t.TempDir())
	t.Setenv("LOCKSTEP_TEST_FULL", "0")
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	linter := write("lint", "#!/bin/sh\necho lint 1.0\n", 0o755)
	pkg := write("a.deb", "package a", 0o644)
	key := func(tool, pkg string, args []string, config string) string {
		return lintCache(t, tool, pkg, args, []byte(config)).path
	}
	base := key(linter, pkg, []string{"-r", "/clone/a/lockstep.rpmlintrc"}, "rc")
	lintCache(t, linter, pkg, nil, nil).put(t, []byte("W: clean\n"))
	if out, ok := lintCache(t, linter, pkg, nil, nil).get(t); !ok || string(out) != "W: clean\n" {
		t.Fatalf("a kept report read back as %q, %v", out, ok)
	}

	if got := key(linter, pkg, []string{"-r", "/clone/b/lockstep.rpmlintrc"}, "rc"); got != base {
		t.Errorf("another clone's path to the same rpmlintrc changed the key")
	}
	if got := key(linter, pkg, []string{"-r", "/clone/a/lockstep.rpmlintrc"}, "rc, edited"); got == base {
		t.Errorf("an edited rpmlintrc kept the key")
	}
	if got := key(linter, write("b.deb", "package b", 0o644), []string{"-r", "/clone/a/lockstep.rpmlintrc"}, "rc"); got == base {
		t.Errorf("another package kept the key")
	}
	write("lint", "#!/bin/sh\necho lint 1.1\n", 0o755)
	if got := key(linter, pkg, []string{"-r", "/clone/a/lockstep.rpmlintrc"}, "rc"); got == base {
		t.Errorf("another linter version kept the key")
	}
	if _, ok := lintCache(t, linter, pkg, nil, nil).get(t); ok {
		t.Errorf("the report of lint 1.0 was read back for lint 1.1")
	}

	t.Setenv("LOCKSTEP_TEST_FULL", "1")
	write("lint", "#!/bin/sh\necho lint 1.0\n", 0o755)
	if _, ok := lintCache(t, linter, pkg, nil, nil).get(t); ok {
		t.Errorf("LOCKSTEP_TEST_FULL=1 read a kept report back")
	}
}
