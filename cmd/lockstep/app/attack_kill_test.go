package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// TestKillHelper is not a test: run by TestAttackKillPublish as a child
// process (LOCKSTEP_KILL_HELPER set), it is the process that gets killed.
// "publish DIR FILE..." runs the real CLI publish of each file in turn;
// "stall DIR" creates a temporary file in DIR as every writer does,
// writes part of it and waits to be killed.
func TestKillHelper(t *testing.T) {
	mode := os.Getenv("LOCKSTEP_KILL_HELPER")
	if mode == "" {
		t.Skip("run by TestAttackKillPublish")
	}
	args := strings.Split(mode, "\x1f")
	switch args[0] {
	case "publish":
		for _, f := range args[2:] {
			run(t, "publish", "--allow-unsigned", "--store", args[1], f)
		}
	case "stall":
		f, err := atomicfile.CreateTemp(args[1], "stalled.json")
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(`{"apiVersion":`))
		fmt.Println("ready")
		time.Sleep(time.Minute)
	}
	os.Exit(0)
}

// manifestFiles writes manifests of release web, of generations from to
// from+n-1, into dir and returns their paths.
func manifestFiles(t *testing.T, dir string, from int64, n int) []string {
	var out []string
	for g := from; g < from+int64(n); g++ {
		p := filepath.Join(dir, fmt.Sprintf("g%d.json", g))
		if err := os.WriteFile(p, storetest.Manifest(t, "web", g, "").Raw, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// killedPublish runs the real CLI publish of files, one after another, to
// the store in a child process (TestKillHelper) whose environment has env
// too, and kills it with SIGKILL after delay.
func killedPublish(t *testing.T, env []string, store string, files []string, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
	cmd.Env = append(append(os.Environ(), env...), "LOCKSTEP_KILL_HELPER=publish\x1f"+store+"\x1f"+strings.Join(files, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// tempFiles lists every temporary file under dir.
func tempFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.Contains(e.Name(), atomicfile.TempMarker) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Class 9 of issue 35 (the publish half): kill -9 at any point of a
// publish leaves no temporary file that the next publish or gc does not
// clean, and the live generation intact. The real CLI publish runs in a
// child process, killed with SIGKILL after a random delay, again and
// again; after each kill the next publish runs, and every temporary file
// must be gone, the channel must name that publish, and every stored
// manifest must read. A child stalled inside a write shows the other half:
// a temporary file whose writer is alive is never swept.
func TestAttackKillPublish(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	const rounds, perChild = 12, 40
	files := func(from int64, n int) []string { return manifestFiles(t, dir, from, n) }
	st, err := filestore.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	next, leftBehind := int64(1), 0
	for round := range rounds {
		fs := files(next, perChild)
		next += perChild
		killedPublish(t, nil, storeDir, fs, time.Duration(rand.IntN(40*(round+1)))*time.Millisecond)
		leftBehind += len(tempFiles(t, storeDir))

		// The next publish, as the pipeline retries it.
		g := next
		next++
		if code, out, errs := run(t, "publish", "--allow-unsigned", "--store", storeDir, files(g, 1)[0]); code != 0 {
			t.Fatalf("round %d: the publish after the kill: exit %d\n%s\n%s", round, code, out, errs)
		}
		if tf := tempFiles(t, storeDir); len(tf) > 0 {
			t.Errorf("round %d: temporary files left after the next publish: %v", round, tf)
		}
		p, err := st.Channel(context.Background(), "web", "production")
		if err != nil || p.Generation != g {
			t.Fatalf("round %d: the channel after the next publish: %+v, %v; want generation %d", round, p, err, g)
		}
		if _, unread, err := store.Retain(context.Background(), st, "web", store.GCOptions{}); err != nil || len(unread) > 0 {
			t.Fatalf("round %d: a stored manifest does not read: %v %v", round, err, unread)
		}
	}
	t.Logf("%d rounds; %d temporary files left by kills, all swept by the next publish", rounds, leftBehind)

	// A writer stalled inside a write: alive, its file stays through gc;
	// killed, the next gc takes it.
	manifests := filepath.Join(storeDir, "web", "manifests")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
	cmd.Env = append(os.Environ(), "LOCKSTEP_KILL_HELPER=stall\x1f"+manifests)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, _ := out.Read(buf); !strings.Contains(string(buf[:n]), "ready") {
		t.Fatalf("the stalled writer did not start: %q", buf[:n])
	}
	if code, o, errs := run(t, "gc", "--store", storeDir, "--release", "web", "--keep", "3", "--yes"); code != 0 {
		t.Fatalf("gc: exit %d\n%s\n%s", code, o, errs)
	}
	if tf := tempFiles(t, storeDir); len(tf) != 1 {
		t.Errorf("gc while the writer is alive: temporary files %v, want its one file kept", tf)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if code, o, errs := run(t, "gc", "--store", storeDir, "--release", "web", "--keep", "3", "--yes"); code != 0 {
		t.Fatalf("gc: exit %d\n%s\n%s", code, o, errs)
	}
	if tf := tempFiles(t, storeDir); len(tf) != 0 {
		t.Errorf("gc after the kill: temporary files %v left", tf)
	}
}
