package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
)

func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteAll(dir, atomicfile.File{Name: "a", Data: []byte("new a"), Perm: 0o600},
		atomicfile.File{Name: "b", Data: []byte("new b"), Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "new a", "b": "new b"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a")); fi.Mode().Perm() != 0o640 {
		t.Errorf("a's mode = %v, want the existing file's 0640 kept", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Join(dir, "b")); fi.Mode().Perm() != 0o600 {
		t.Errorf("b's mode = %v, want 0600", fi.Mode().Perm())
	}
	// A file that cannot be written (a directory in its place is fine for
	// the temporary file, not for the rename) leaves the ones before it
	// replaced, the ones after untouched, and no temporary file.
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.WriteAll(dir, atomicfile.File{Name: "a", Data: []byte("newer a")},
		atomicfile.File{Name: "d", Data: []byte("file")}, atomicfile.File{Name: "b", Data: []byte("newer b")})
	if err == nil {
		t.Fatal("WriteAll over a non-empty directory succeeded")
	}
	for name, want := range map[string]string{"a": "newer a", "b": "new b"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("after the failed rename %s = %q, want %q", name, b, want)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want a, b and d only", names)
	}
	// A directory that does not exist: nothing written, an error.
	if err := atomicfile.WriteAll(filepath.Join(dir, "missing"), atomicfile.File{Name: "a", Data: []byte("x")}); err == nil {
		t.Error("WriteAll into a missing directory succeeded")
	}
}

// Sweep removes a temporary file whose writer is gone (nothing holds its
// lock: a writer killed with SIGKILL) and keeps one whose writer holds
// it, and every other file.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, ".m.json"+atomicfile.TempMarker+"123")
	if err := os.WriteFile(dead, []byte("part"), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := atomicfile.CreateTemp(dir, "p.json")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	for _, n := range []string{"m.json", ".lock", "x.tmp-1"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	got, err := atomicfile.Sweep(dir)
	if err != nil || len(got) != 1 || got[0] != filepath.Base(dead) {
		t.Fatalf("Sweep = %v, %v; want only %s", got, err, filepath.Base(dead))
	}
	for _, p := range []string{live.Name(), filepath.Join(dir, "m.json"), filepath.Join(dir, ".lock"), filepath.Join(dir, "x.tmp-1")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("Sweep removed %s: %v", p, err)
		}
	}
	if got, err := atomicfile.Sweep(filepath.Join(dir, "none")); err != nil || len(got) != 0 {
		t.Errorf("Sweep of a missing directory = %v, %v", got, err)
	}
}

// Sweep never takes a temporary file from a writer that is still creating
// it: writers create while sweeps run without a pause (as a publisher's
// Put meets a gc's sweep), and every CreateTemp succeeds with a file that
// is still linked.
func TestCreateTempBesideSweeps(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	var sweeps sync.WaitGroup
	for range 2 {
		sweeps.Add(1)
		go func() {
			defer sweeps.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := atomicfile.Sweep(dir); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 300 {
				f, err := atomicfile.CreateTemp(dir, fmt.Sprintf("w%d-%d.json", w, i))
				if err != nil {
					t.Errorf("writer %d, file %d: %v", w, i, err)
					return
				}
				if _, err := os.Stat(f.Name()); err != nil {
					t.Errorf("writer %d, file %d: swept while its writer held it: %v", w, i, err)
				}
				f.Close()
				os.Remove(f.Name())
			}
		}()
	}
	writers.Wait()
	close(stop)
	sweeps.Wait()
}
