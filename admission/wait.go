package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"github.com/lockstep-dev/lockstep/admission/probe"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/transport"
)

// On a real boot the gate starts before the app it checks is up: the
// container is not created yet, the app refuses connections, the proxy in
// front of it answers 502. Those are "not yet", waited out with the
// shared backoff until the wait ends; anything else (a 404, a page in no
// known shape, several containers and none named) is final, and so is a
// digest or an asset that does not match, which is a comparison, not a
// failure to observe.

// waitDeadline is when a check stops waiting for the runtime and the
// probes: Wait after start, or, when Wait is zero, the deadline less a
// sixth of Timeout, which is left for the rest of the check (and for a
// call started at the end of the wait: see callDeadline); never later.
func (c Config) waitDeadline(start time.Time) time.Time {
	if c.Wait < 0 {
		return start
	}
	if c.Wait > 0 {
		return start.Add(min(c.Wait, c.Timeout-c.Timeout/6))
	}
	return start.Add(c.Timeout - c.Timeout/6)
}

// runtimeNotYet reports whether a failure to observe the running image
// can be cured by waiting: a runtime not answering yet (its socket absent
// or refusing), a container not created or not started yet.
func runtimeNotYet(err error) bool {
	switch {
	case errors.Is(err, running.ErrAmbiguous):
		return false
	case errors.Is(err, running.ErrNoContainer), errors.Is(err, running.ErrNotRunning), errors.Is(err, syscall.ENOENT):
		return true
	}
	return transport.RetryableError(err)
}

// probeNotYet reports whether a failure to fetch a probe can be cured by
// waiting: a connection refused, reset or timed out, or a 502, 503 or 504.
func probeNotYet(err error) bool {
	var se *probe.StatusError
	if errors.As(err, &se) {
		return se.Code == http.StatusBadGateway || se.Code == http.StatusServiceUnavailable || se.Code == http.StatusGatewayTimeout
	}
	return transport.RetryableError(err)
}

// callDeadline is when one call to the runtime, or one fetch of a probe,
// made at now while the check waits, must end: a sixth of Timeout later
// (10 s of the default 60 s), and never later than a twelfth of Timeout
// before the check's deadline. A call that does not answer so fails with
// a cause of its own and is tried again, and the check has time left to
// say what it waited for: no call runs into the whole check's deadline.
func (c Config) callDeadline(now, deadline time.Time) time.Time {
	end, last := now.Add(c.Timeout/6), deadline.Add(-c.Timeout/12)
	if last.Before(end) {
		return last
	}
	return end
}

// waitLogEvery is how often a wait that goes on says so, when its cause
// does not change.
const waitLogEvery = 5 * time.Second

// waitFor calls fn until it succeeds, fails for good, or the wait ends
// (see waitDeadline, or stop is done), with the client's backoff between
// calls, and records in the decision how long it waited. At least one call
// is made, whatever stop says; each has a deadline of its own
// (callDeadline). While it waits it says so on the logger at Info (what,
// why, the attempt, the time left): at the first "not yet", when the cause
// changes and every waitLogEvery. It marks the wait, and each failure, in
// ctx's transport.Waits, so that a deadline reached meanwhile names it.
// An error after a wait says how long it was and is the last failure that
// said something of what was waited for (a refusal of the client's
// breaker, which sent nothing, does not), keeping its type.
func waitFor[T any](ctx, stop context.Context, c *checker, what string, notYet func(error) bool, fn func(context.Context) (T, error)) (T, error) {
	cfg := c.cfg
	start := cfg.Now()
	waitUntil := cfg.waitDeadline(c.d.At)
	wctx, cancel := context.WithDeadline(stop, waitUntil)
	defer cancel()
	waits := transport.WaitsFrom(ctx)
	defer waits.Begin(what)()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = c.d.At.Add(cfg.Timeout)
	}
	var (
		v       T
		cause   error // the last failure that says something of what
		before  error // the one before it that said something else
		said    string
		saidAt  time.Time
		attempt int
	)
	calls, err := transport.Until(wctx, cfg.Client.Policy(), notYet, func(context.Context) error {
		attempt++
		now := time.Now() // contexts' deadlines are the real clock's, whatever cfg.Now says
		budget := cfg.callDeadline(now, deadline)
		callCtx, cancel := context.WithDeadline(ctx, budget)
		var err error
		v, err = fn(callCtx)
		cancel()
		if err != nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%s did not answer within %s: %w", what, budget.Sub(now).Round(time.Millisecond), err)
		}
		var open *transport.CircuitOpenError
		if err != nil && !errors.As(err, &open) {
			if cause != nil && cause.Error() != err.Error() {
				before = cause
			}
			cause = err
			waits.Fail(what, err)
		}
		if err != nil && notYet(err) && cause != nil {
			why := cause.Error()
			if now := cfg.Now(); why != said || now.Sub(saidAt) >= waitLogEvery {
				cfg.Logger.Info("waiting", "for", what, "why", why, "attempt", attempt,
					"left", max(waitUntil.Sub(now), 0).Round(time.Second))
				said, saidAt = why, now
			}
		}
		return err
	})
	if calls == 1 {
		return v, err
	}
	waited := cfg.Now().Sub(start)
	c.update(func(d *Decision) { d.Waited = max(d.Waited, waited) })
	if err == nil {
		cfg.Logger.Info("waited", "for", what, "waited", waited.Round(time.Millisecond), "attempts", calls)
		return v, nil
	}
	if cause == nil {
		cause = err
	}
	var also string
	if cause != err {
		also += fmt.Sprintf(" (the last attempt: %v)", err)
	}
	if before != nil {
		also += fmt.Sprintf(" (before that: %v)", before)
	}
	return v, fmt.Errorf("waited %s (%d attempts): %w%s", waited.Round(time.Millisecond), calls, cause, also)
}
