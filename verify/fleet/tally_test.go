package fleet

import (
	"reflect"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
)

// TestTallyDuplicateNames: instances that share a name (two targets that
// resolve to one host name, a restarted pod) are each counted once, in
// target order, whatever order they are added in: none is lost, none is
// counted twice, the divergent and unreachable ones among them kept.
func TestTallyDuplicateNames(t *testing.T) {
	m := fleettest.Signed(t, 7)
	match := Instance{Name: "web", Running: "sha256:aa", Fingerprint: "f", Generation: 7}
	diverge := match
	diverge.Differences = []Difference{{Kind: DiffImage, Message: "other image"}}
	down := Instance{Name: "web", Problem: &Problem{Kind: ProblemUnreachable, Message: "refused"}}
	ins := []Instance{match, diverge, match, down, diverge, down}
	want := newReport(m, ins, 1)
	s := want.Summary
	if s.Instances != 6 || s.Match != 2 || s.Divergent != 2 || s.Unreachable != 2 {
		t.Fatalf("summary %+v, want 6 instances: 2 match, 2 divergent, 2 unreachable", s)
	}
	if len(want.Groups) != 1 || want.Groups[0].Count != 4 || len(want.Groups[0].Instances) != 4 || want.Groups[0].Match {
		t.Errorf("groups %+v, want one non-matching group of 4 instances named web", want.Groups)
	}
	if len(want.Divergent) != 2 || len(want.Unreachable) != 2 {
		t.Errorf("%d divergent, %d unreachable listed, want 2 and 2", len(want.Divergent), len(want.Unreachable))
	}
	// Added concurrently, in reverse: the same report.
	tl := newTally(m, len(ins))
	var wg sync.WaitGroup
	for i := len(ins) - 1; i >= 0; i-- {
		wg.Go(func() { tl.add(i, ins[i]) })
	}
	wg.Wait()
	got := tl.report(1)
	got.CheckedAt, want.CheckedAt = want.CheckedAt, got.CheckedAt
	if !reflect.DeepEqual(got.Summary, want.Summary) || !reflect.DeepEqual(got.Groups, want.Groups) ||
		!reflect.DeepEqual(got.Divergent, want.Divergent) || !reflect.DeepEqual(got.Unreachable, want.Unreachable) {
		t.Errorf("added out of order:\n%+v\nwant\n%+v", got, want)
	}
}
