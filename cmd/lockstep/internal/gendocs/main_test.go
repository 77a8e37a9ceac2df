package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCommittedPagesAreCurrent fails when docs/reference/ or docs/man/
// differ from what the CLI definitions give: a flag, a usage string or a
// command changed without the pages being regenerated.
func TestCommittedPagesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	pages, err := Pages()
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			stale = append(stale, name)
		}
	}
	for _, dir := range []string{referenceDir, manDir} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel := dir + "/" + filepath.Base(f)
			if _, ok := pages[rel]; !ok && generated(f) {
				stale = append(stale, rel+" (no such command)")
			}
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("the command reference is out of date; run `%s` from the repository root and commit the result:\n  %s",
			regenerate, strings.Join(stale, "\n  "))
	}
}

// TestPages checks what a reader relies on: a page per command and
// subcommand, each flag of a command on its page with its default and
// environment variable, and a man page that names the command.
func TestPages(t *testing.T) {
	pages, err := Pages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"docs/reference/lockstep.md", "docs/reference/lockstep_pin.md", "docs/reference/lockstep_manifest_verify.md",
		"docs/reference/lockstep_fleet_check.md", "docs/man/lockstep.1", "docs/man/lockstep-cdn-check.1",
	} {
		if _, ok := pages[name]; !ok {
			t.Errorf("no page %s", name)
		}
	}
	pin := string(pages["docs/reference/lockstep_pin.md"])
	for _, want := range []string{
		"| `--cache DIR` | `$XDG_CACHE_HOME/lockstep/registry` | `$LOCKSTEP_CACHE` |",
		"| `--concurrency value` | `16` |",
		"[`lockstep`](lockstep.md)",
		"Examples:\n  lockstep pin registry.example/store/web:v1.4.2\n",
		"Exit codes:\n  0  pinned (and verified)\n",
	} {
		if !strings.Contains(pin, want) {
			t.Errorf("lockstep_pin.md lacks %q:\n%s", want, pin)
		}
	}
	top := string(pages["docs/reference/lockstep.md"])
	if !strings.Contains(top, "[`lockstep admit`](lockstep_admit.md)") || !strings.Contains(top, "`--log-level value`") {
		t.Errorf("lockstep.md lacks the commands or the global flags:\n%s", top)
	}
	if strings.Contains(top, "help, h") {
		t.Errorf("lockstep.md lists the help command")
	}
	man := string(pages["docs/man/lockstep-admit.1"])
	if !strings.Contains(man, ".TH LOCKSTEP-ADMIT 1") || !strings.Contains(man, `\fB--running value\fP`) {
		t.Errorf("lockstep-admit.1 lacks its title or --running:\n%s", man)
	}
	for name, p := range pages {
		if strings.HasSuffix(name, ".1") && bytes.ContainsFunc(p, func(r rune) bool { return r >= 0x80 }) {
			t.Errorf("%s is not ASCII", name)
		}
	}
}

func TestUnquoteUsage(t *testing.T) {
	for _, tc := range []struct{ in, name, text string }{
		{"keep `DIR` here", "DIR", "keep DIR here"},
		{"no placeholder", "", "no placeholder"},
		{"one `quote", "", "one `quote"},
	} {
		name, text := unquoteUsage(tc.in)
		if name != tc.name || text != tc.text {
			t.Errorf("unquoteUsage(%q) = %q, %q; want %q, %q", tc.in, name, text, tc.name, tc.text)
		}
	}
}
