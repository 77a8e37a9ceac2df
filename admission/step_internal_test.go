package admission

import (
	"context"
	"testing"
)

// TestStepFrozenAtTheDeadline: once the check's context has ended, the
// step a deadline's finding names is the one it ended in, however far the
// pipeline's goroutine runs on before Check reads it.
func TestStepFrozenAtTheDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checker{cfg: Config{}.withDefaults(), over: ctx.Err}
	c.setStep("checking assets on the CDN")
	cancel()
	c.setStep("checking certificates")
	if got := c.stepName(); got != "checking assets on the CDN" {
		t.Errorf("step after the context ended = %q, want the step it ended in", got)
	}

	// Before it ends, and for a check that never named a step, the step moves.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	c = &checker{cfg: Config{}.withDefaults(), over: ctx.Err}
	c.setStep("fetching")
	c.setStep("comparing")
	if got := c.stepName(); got != "comparing" {
		t.Errorf("step = %q, want comparing", got)
	}
	ended, stop := context.WithCancel(context.Background())
	stop()
	c = &checker{cfg: Config{}.withDefaults(), over: ended.Err}
	c.setStep("fetching")
	if got := c.stepName(); got != "fetching" {
		t.Errorf("the first step of a check already over = %q, want it named", got)
	}
}
