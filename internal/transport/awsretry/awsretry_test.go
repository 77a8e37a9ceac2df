package awsretry

import (
	"context"
	"errors"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

func TestNew(t *testing.T) {
	p := transport.DefaultPolicy()
	r := New(p)
	if r.MaxAttempts() != p.MaxAttempts {
		t.Errorf("MaxAttempts() = %d, want %d", r.MaxAttempts(), p.MaxAttempts)
	}
	for attempt := 1; attempt <= 10; attempt++ {
		d, err := r.RetryDelay(attempt, errors.New("x"))
		if err != nil || d <= 0 || d > p.Ceiling(attempt-1) {
			t.Errorf("RetryDelay(%d) = %v, %v; want in (0, %v]", attempt, d, err, p.Ceiling(attempt-1))
		}
	}
	// The budget: RetryFloor/2 retries, then the SDK's quota refuses.
	ctx := context.Background()
	for i := range p.RetryFloor / 2 {
		if _, err := r.GetRetryToken(ctx, errors.New("x")); err != nil {
			t.Fatalf("retry %d of %d refused: %v", i+1, p.RetryFloor/2, err)
		}
	}
	if _, err := r.GetRetryToken(ctx, errors.New("x")); err == nil {
		t.Errorf("retry %d granted, want the budget exhausted", p.RetryFloor/2+1)
	}
	// Ten successful first attempts earn one retry back (RetryRatio 0.1).
	for range 10 {
		release, err := r.GetAttemptToken(ctx)
		if err != nil {
			t.Fatal(err)
		}
		release(nil)
	}
	if _, err := r.GetRetryToken(ctx, errors.New("x")); err != nil {
		t.Errorf("after 10 good attempts: retry refused: %v", err)
	}
}
