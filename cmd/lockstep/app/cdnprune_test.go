package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/prune"
)

// pruneSite publishes generations 1 to 3 of "web" to a directory store
// and their assets (storetest's fixture: one 10-byte file each) to a
// directory origin.
func pruneSite(t *testing.T) (storeDir, originDir string, ms []*manifest.Signed) {
	t.Helper()
	storeDir, originDir = t.TempDir(), t.TempDir()
	st, err := filestore.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	for g := int64(1); g <= 3; g++ {
		m := storetest.Manifest(t, "web", g, "")
		for _, f := range m.Manifest.Assets.Files {
			p := filepath.Join(originDir, filepath.FromSlash(f.Path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := store.Publish(context.Background(), st, m, "production", "test"); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return storeDir, originDir, ms
}

func TestCDNPrune(t *testing.T) {
	t.Parallel()
	storeDir, originDir, ms := pruneSite(t)
	asset := func(g int) string {
		return filepath.Join(originDir, filepath.FromSlash(ms[g-1].Manifest.Assets.Files[0].Path))
	}
	args := []string{"cdn", "prune", "--store", storeDir, "--release", "web", "--origin", "file://" + originDir, "--keep", "1"}

	out, errs, code := runCDN(t, args...)
	if code != 0 || !strings.Contains(out, "would delete "+ms[0].Manifest.Assets.Files[0].Path+" (10 bytes) of generation(s) [1]\n") ||
		!strings.Contains(out, "dry run: pass --yes to delete") {
		t.Fatalf("dry run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := os.Stat(asset(1)); err != nil {
		t.Fatalf("a dry run deleted: %v", err)
	}

	// A fleet report shows generation 2 running: its asset stays.
	report := filepath.Join(t.TempDir(), "fleet.json")
	doc := `{"inUse":[{"manifestDigest":"` + ms[2].Digest.String() + `"}],"unreachable":[{"name":"i-1","release":"web","generation":2}]}`
	if err := os.WriteFile(report, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCDN(t, append(args, "--in-use", report, "--yes", "--format", "json")...)
	var r prune.Report
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.DryRun || len(r.Deleted) != 1 || r.Deleted[0].Generations[0] != 1 {
		t.Fatalf("--yes: exit %d, report %+v (%v), stderr %q", code, r, err, errs)
	}
	if !strings.Contains(errs, "prune: deleted object") {
		t.Errorf("the delete was not logged: stderr %q", errs)
	}
	if _, err := os.Stat(asset(1)); !os.IsNotExist(err) {
		t.Errorf("generation 1's asset: %v, want deleted", err)
	}
	if _, err := os.Stat(asset(2)); err != nil {
		t.Errorf("generation 2's asset, running: %v", err)
	}

	// A kept generation's asset missing: refused, nothing deleted.
	if err := os.Remove(asset(3)); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCDN(t, append(args[:len(args)-1], "0", "--yes")...)
	if code != 1 || !strings.Contains(out, "missing "+ms[2].Manifest.Assets.Files[0].Path) {
		t.Errorf("missing kept asset: exit %d, stdout %q, stderr %q; want 1", code, out, errs)
	}
	if _, err := os.Stat(asset(2)); err != nil {
		t.Errorf("a refused prune deleted: %v", err)
	}
}

func TestCDNPruneExitCodes(t *testing.T) {
	t.Parallel()
	storeDir, originDir, _ := pruneSite(t)
	base := []string{"cdn", "prune", "--store", storeDir, "--release", "web"}
	notReport := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(notReport, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad origin URL", []string{"--origin", "s3:/x", "--keep", "1"}, 2, "--origin"},
		{"origin is the store", []string{"--origin", storeDir, "--keep", "1"}, 2, "overlaps --store"},
		{"origin holds the store", []string{"--origin", filepath.Dir(storeDir), "--keep", "1"}, 2, "overlaps --store"},
		{"negative keep", []string{"--origin", originDir, "--keep", "-1"}, 2, "--keep"},
		{"negative older-than", []string{"--origin", originDir, "--keep", "1", "--older-than", "-1h"}, 2, "--older-than"},
		{"not a report", []string{"--origin", originDir, "--keep", "1", "--in-use", notReport}, 2, "--in-use"},
		{"an argument", []string{"--origin", originDir, "--keep", "1", "extra"}, 2, "no arguments"},
		{"unreadable report", []string{"--origin", originDir, "--keep", "1", "--in-use", filepath.Join(originDir, "none.json")}, 3, "none.json"},
		{"no origin", []string{"--origin", filepath.Join(originDir, "none"), "--keep", "1"}, 3, "origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCDN(t, append(base, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d mentioning %q", code, out, errs, tc.code, tc.want)
			}
		})
	}
}
