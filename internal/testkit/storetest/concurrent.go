package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// serverBusy says that err carries a server's 5xx answer that outlived the
// client's retries and its retry budget: radosgw answers 500 to concurrent
// conditional writes of one object when the machine is loaded. A pipeline
// meets it as exit 3 and runs the publish again; the contract is what the
// store keeps, not the server's availability, so the publishers and the gc
// loop do as the pipeline does (again), and every such retry is logged.
func serverBusy(err error) bool {
	var se interface{ HTTPStatusCode() int }
	return errors.As(err, &se) && se.HTTPStatusCode() >= 500
}

// again runs op, and runs it again while it fails with serverBusy, with
// transport.Until's capped, fully jittered backoff, for at most 30 s;
// each retry is logged.
func again(t *testing.T, what string, op func() error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := transport.Policy{BaseDelay: 50 * time.Millisecond, MaxDelay: time.Second}
	_, err := transport.Until(ctx, p, func(err error) bool {
		if serverBusy(err) {
			t.Logf("%s: the server was busy, as a pipeline would: again: %v", what, err)
			return true
		}
		return false
	}, func(context.Context) error { return op() })
	return err
}

// recorder is a Store that checks every Delete against the channel at the
// time: the deleted manifest's generation must be below the channel's
// generation read just before the delete (channels only rise, so the
// channel cannot have named it during the delete), and at least keep newer
// manifests must be stored.
type recorder struct {
	manifest.Store
	t    *testing.T
	keep int
	gens map[manifest.Digest]int64

	mu      sync.Mutex
	deleted map[manifest.Digest]bool
}

func (r *recorder) Delete(ctx context.Context, release string, d manifest.Digest) error {
	gen := r.gens[d]
	cs, err := r.Store.Channels(ctx, release)
	if err != nil {
		return err
	}
	for _, c := range cs {
		p, err := r.Store.Channel(ctx, release, c)
		if err != nil {
			return err
		}
		if p.Digest == d || p.Generation <= gen {
			r.t.Errorf("gc deletes %s (generation %d) while channel %s is at generation %d %s", d, gen, c, p.Generation, p.Digest)
		}
	}
	ds, err := r.Store.List(ctx, release)
	if err != nil {
		return err
	}
	newer := 0
	for _, x := range ds {
		if r.gens[x] > gen {
			newer++
		}
	}
	if newer < r.keep {
		r.t.Errorf("gc deletes %s (generation %d) with only %d newer manifests stored, want at least %d kept", d, gen, newer, r.keep)
	}
	err = r.Store.Delete(ctx, release, d)
	r.mu.Lock()
	r.deleted[d] = true
	r.mu.Unlock()
	r.t.Logf("gc deleted %s (generation %d)", d, gen)
	return err
}

// testConcurrent: publishers of generations 1..n in random order, at once,
// while gc --keep 3 --yes runs in a loop, and a reader follows the channel.
func testConcurrent(t *testing.T, st manifest.Store, n int) {
	ctx := context.Background()
	const keep = 3
	ms := make([]*manifest.Signed, n)
	rec := &recorder{Store: st, t: t, keep: keep, gens: map[manifest.Digest]int64{}, deleted: map[manifest.Digest]bool{}}
	for i := range ms {
		ms[i] = Manifest(t, "web", int64(i+1), "")
		rec.gens[ms[i].Digest] = int64(i + 1)
	}
	order := rand.Perm(n)
	done := make(chan struct{})
	var gcWG, readWG sync.WaitGroup
	gcRuns := 0
	// nextGC is closed when the next gc pass starts: publishers wait for
	// one to five passes between storing and moving, so gc sees stored
	// manifests that are about to become live (the race window), and the
	// moves spread over many passes.
	var gcMu sync.Mutex
	nextGC := make(chan struct{})
	waitGC := func() <-chan struct{} { gcMu.Lock(); defer gcMu.Unlock(); return nextGC }
	gcWG.Add(1)
	go func() {
		defer gcWG.Done()
		for {
			gcMu.Lock()
			close(nextGC)
			nextGC = make(chan struct{})
			gcMu.Unlock()
			select {
			case <-done:
				return
			default:
			}
			if err := again(t, "gc", func() error {
				_, err := store.GC(ctx, rec, "web", store.GCOptions{Keep: keep, Delete: true})
				return err
			}); err != nil {
				t.Errorf("gc: %v", err)
				return
			}
			gcRuns++
		}
	}()
	// The reader: every manifest the channel names is readable, unless
	// the channel has moved on and gc was allowed to take it.
	readWG.Add(1)
	reads := 0
	go func() {
		defer readWG.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			p, err := st.Channel(ctx, "web", "production")
			if errors.Is(err, manifest.ErrNotFound) {
				continue
			}
			if serverBusy(err) {
				continue // read again
			}
			if err != nil {
				t.Errorf("reader: Channel: %v", err)
				return
			}
			_, err = st.Get(ctx, "web", p.Digest)
			if err == nil {
				reads++
				continue
			}
			if serverBusy(err) {
				continue // an answer that says nothing of what is stored
			}
			now, cerr := st.Channel(ctx, "web", "production")
			if serverBusy(cerr) {
				continue
			}
			if cerr != nil || now.Generation <= p.Generation {
				t.Errorf("reader: the channel names generation %d %s, which is gone (%v) while still live", p.Generation, p.Digest, err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var moved []*manifest.Pointer
	start := make(chan struct{})
	for _, i := range order {
		wg.Add(1)
		go func(s *manifest.Signed) {
			defer wg.Done()
			<-start
			gen := s.Manifest.Release.Generation
			if err := again(t, fmt.Sprintf("Put(%d)", gen), func() error { return st.Put(ctx, s) }); err != nil {
				t.Errorf("Put(%d): %v", gen, err)
				return
			}
			for range 1 + rand.IntN(5) {
				<-waitGC()
			}
			var p *manifest.Pointer
			tries := 0
			err := again(t, fmt.Sprintf("Publish(%d)", gen), func() error {
				tries++
				var err error
				p, err = st.Move(ctx, "production", s, fmt.Sprintf("publisher-%d", gen))
				return err
			})
			var ge *manifest.GenerationError
			switch {
			case tries > 1 && errors.As(err, &ge) && ge.Have == gen && ge.HaveDigest == s.Digest:
				// A write the server answered 500 had landed: the
				// channel names this very manifest.
				t.Logf("Publish(%d): the move the server answered 5xx to had landed", gen)
			case errors.As(err, &ge):
				if ge.Offered >= ge.Have {
					t.Errorf("refused generation %d over %d", ge.Offered, ge.Have)
				}
			case err != nil:
				t.Errorf("Publish(%d): %v", gen, err)
			default:
				mu.Lock()
				moved = append(moved, p)
				mu.Unlock()
			}
		}(ms[i])
	}
	close(start)
	wg.Wait()
	// One more gc pass with everyone done, then stop the loop.
	close(done)
	gcWG.Wait()
	readWG.Wait()
	if _, err := store.GC(ctx, rec, "web", store.GCOptions{Keep: keep, Delete: true}); err != nil {
		t.Fatalf("gc: %v", err)
	}
	p, err := st.Channel(ctx, "web", "production")
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != int64(n) || p.Digest != ms[n-1].Digest {
		t.Fatalf("the channel ends at generation %d, want %d", p.Generation, n)
	}
	// Every move strictly rose: the successful moves, sorted by time,
	// have rising generations; the history agrees.
	for i := 1; i < len(p.History); i++ {
		if p.History[i].Generation >= p.History[i-1].Generation {
			t.Errorf("history not strictly falling: %d then %d", p.History[i-1].Generation, p.History[i].Generation)
		}
	}
	if _, err := st.Get(ctx, "web", p.Digest); err != nil {
		t.Errorf("the live manifest is unreadable: %v", err)
	}
	for g := n; g > n-keep && g > 0; g-- {
		if _, err := st.Get(ctx, "web", ms[g-1].Digest); err != nil {
			t.Errorf("newest manifest generation %d is unreadable: %v", g, err)
		}
	}
	ds, err := st.List(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != keep {
		t.Errorf("after the final gc %d manifests are stored, want the newest %d", len(ds), keep)
	}
	t.Logf("%d publishers, %d moved the channel, %d gc runs, %d deletes, %d reads", n, len(moved), gcRuns, len(rec.deleted), reads)
}
