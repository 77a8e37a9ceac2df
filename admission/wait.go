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
// sixth of Timeout, which is left for the rest of the check.
func (c Config) waitDeadline(start time.Time) time.Time {
	if c.Wait < 0 {
		return start
	}
	if c.Wait > 0 {
		return start.Add(min(c.Wait, c.Timeout))
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

// waitFor calls fn until it succeeds, fails for good, or the wait ends
// (see waitDeadline, or stop is done), with the client's backoff between
// calls, and records in the decision how long it waited. Each call has
// ctx: at least one is made, whatever stop says. An error after a wait says
// how long it was and keeps its type.
func waitFor[T any](ctx, stop context.Context, c *checker, what string, notYet func(error) bool, fn func(context.Context) (T, error)) (T, error) {
	cfg := c.cfg
	start := cfg.Now()
	wctx, cancel := context.WithDeadline(stop, cfg.waitDeadline(c.d.At))
	defer cancel()
	var v T
	calls, err := transport.Until(wctx, cfg.Client.Policy(), notYet, func(context.Context) error {
		var err error
		// The wait bounds when calls start, not how long one takes: each
		// call has the whole check's deadline.
		v, err = fn(ctx)
		if err != nil && notYet(err) {
			cfg.Logger.Debug("waiting", "for", what, "err", err)
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
	return v, fmt.Errorf("waited %s (%d attempts): %w", waited.Round(time.Millisecond), calls, err)
}
