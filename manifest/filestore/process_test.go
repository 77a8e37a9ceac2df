package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// TestMain doubles as a publisher process for TestAcrossProcesses.
func TestMain(m *testing.M) {
	if dir := os.Getenv("FILESTORE_TEST_PUBLISHER_DIR"); dir != "" {
		if err := publisher(dir, os.Getenv("FILESTORE_TEST_PUBLISHER_GENS")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// publisher publishes the given generations in order; a refusal of an
// older generation is expected, anything else is an error.
func publisher(dir, gens string) error {
	st, err := filestore.New(dir)
	if err != nil {
		return err
	}
	for _, f := range strings.Split(gens, ",") {
		g, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return err
		}
		m, err := storetest.NewManifest("web", g, "")
		if err != nil {
			return err
		}
		_, err = store.Publish(context.Background(), st, m, "production", "process-"+strconv.Itoa(os.Getpid()))
		var ge *manifest.GenerationError
		if err != nil && !(errors.As(err, &ge) && ge.Offered < ge.Have) {
			return fmt.Errorf("publishing %d: %w", g, err)
		}
		if err == nil {
			fmt.Println("moved", g)
		}
	}
	return nil
}

// TestAcrossProcesses: four processes publish generations 1..32 into one
// directory at once, each its own rising share (1, 5, 9, … for the first),
// so that most publishes move the channel and race each other. The flock makes each move a
// compare-and-swap across processes: the channel ends at 40 and every move
// in its history rose.
func TestAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs, n = 4, manifest.MaxHistory
	var wg sync.WaitGroup
	var mu sync.Mutex
	moved := map[int64]bool{}
	for p := range procs {
		var gens []string
		for i := p; i < n; i += procs {
			gens = append(gens, strconv.Itoa(i+1))
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "FILESTORE_TEST_PUBLISHER_DIR="+dir, "FILESTORE_TEST_PUBLISHER_GENS="+strings.Join(gens, ","))
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("publisher process: %v\n%s", err, out)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, line := range strings.Split(string(out), "\n") {
				if g, ok := strings.CutPrefix(line, "moved "); ok {
					n, _ := strconv.ParseInt(g, 10, 64)
					moved[n] = true
				}
			}
		}()
	}
	wg.Wait()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Channel(context.Background(), "web", "production")
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != n {
		t.Errorf("the channel ends at %d, want %d", p.Generation, n)
	}
	for i := 1; i < len(p.History); i++ {
		if p.History[i].Generation >= p.History[i-1].Generation {
			t.Errorf("history not strictly falling: %d then %d", p.History[i-1].Generation, p.History[i].Generation)
		}
	}
	// A lost update (two processes writing over one read) would drop a
	// move that its process saw succeed.
	seen := map[int64]bool{p.Generation: true}
	for _, h := range p.History {
		seen[h.Generation] = true
	}
	for g := range moved {
		if !seen[g] {
			t.Errorf("generation %d moved the channel but is not in its history: a lost update", g)
		}
	}
	if len(moved) != len(seen) {
		t.Errorf("%d moves reported, %d in the pointer", len(moved), len(seen))
	}
	t.Logf("%d moves from %d processes", len(moved), procs)
}
