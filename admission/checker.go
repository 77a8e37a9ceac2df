package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/admission/probe"
	"github.com/lockstep-dev/lockstep/internal/transport"
)

// checker accumulates one check's decision. Its methods are safe to call
// from the check's goroutines; after close, they do nothing.
type checker struct {
	cfg    Config
	mu     sync.Mutex
	d      Decision
	step   string
	closed bool
	// over is the check's context's Err: non-nil once it has ended.
	over func() error
}

func (c *checker) add(f Finding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.d.Add(f)
	}
}

func (c *checker) update(fn func(d *Decision)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		fn(&c.d)
	}
}

// setStep names the step the check is in, for a deadline's finding. Once
// the check's context has ended the step stays the one it ended in: the
// pipeline's goroutine may run on into the next step before Check reads
// the name (a loaded runner named "checking certificates" for a deadline
// reached while checking assets on the CDN).
func (c *checker) setStep(s string) {
	c.mu.Lock()
	if c.over != nil && c.over() != nil && c.step != "" {
		c.mu.Unlock()
		return
	}
	c.step = s
	c.mu.Unlock()
	c.cfg.Logger.Debug("admission", "step", s)
}

func (c *checker) stepName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.step == "" {
		return "starting"
	}
	return c.step
}

func (c *checker) close() Decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.d.settle()
	d := c.d
	d.Findings = append([]Finding(nil), c.d.Findings...)
	return d
}

// unreachable records a dependency that failed. A request the gate
// refused to send or follow (a link-local address, a redirect to another
// origin) and a probe that can prove nothing are refusals of their own
// kinds, not "could not check".
//
// A failure that is only the check's own context ending (its deadline, a
// cancellation) is no finding of its own: ended says why the check ended,
// and what it was waiting for.
func (c *checker) unreachable(subject string, err error) {
	if c.over != nil && c.over() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return
	}
	c.add(Finding{Kind: requestKind(err), Subject: subject, Message: err.Error()})
}

// requestKind is the kind of a failed request's finding.
func requestKind(err error) Kind {
	var de *transport.DeniedAddressError
	var re *transport.RedirectError
	var pe *probe.RefusalError
	switch {
	case errors.As(err, &de):
		return KindAddressDenied
	case errors.As(err, &pe) && pe.Reason == probe.ReasonRedirect, errors.As(err, &re):
		return KindRedirectOffOrigin
	case errors.As(err, &pe):
		return KindProbeUnreadable
	}
	return KindDependencyUnreachable
}

func (c *checker) allowed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d.settle()
	return c.d.Allowed
}

// ended records why the check's context ended before the check did: it
// was cancelled (naming what it was waiting for, if anything); or its
// deadline passed while it waited for dependencies
// (pending, as transport.Waits saw them at the deadline), each named with
// its last failure (dependency-unreachable); or it passed while lockstep
// did its own work, nothing being waited for (deadline-own-work), which is
// no dependency's failure.
func (c *checker) ended(ctx context.Context, pending []transport.Pending) {
	step := c.stepName()
	reached := "the deadline of " + c.cfg.Timeout.String() + " was reached"
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// Cancelled (SIGTERM, SIGINT): no cause of the check's own, but
		// what it was waiting for, and why, is still worth saying.
		reached = "the check was cancelled"
		if len(pending) == 0 {
			c.add(Finding{Kind: KindDependencyUnreachable, Subject: step, Message: reached + " while " + step})
			return
		}
	}
	if len(pending) == 0 {
		c.add(Finding{Kind: KindDeadlineOwnWork, Subject: step,
			Message: fmt.Sprintf("%s while lockstep was %s, its own work (parsing, walking the asset graph, hashing), with no request or wait in flight: no dependency failed; the check is more than the timeout allows", reached, step)})
		return
	}
	// A named wait (the runtime, a probe) says more than the hosts of its
	// requests, which its message lists.
	var named []transport.Pending
	var hosts []string
	for _, p := range pending {
		if p.Request {
			hosts = append(hosts, p.Name)
		} else {
			named = append(named, p)
		}
	}
	if len(named) == 0 {
		named = pending
	}
	now := time.Now()
	for _, p := range named {
		subject := p.Name
		if p.Request {
			subject = "host " + p.Name
		}
		msg := fmt.Sprintf("%s while %s, waiting for %s (for %s)", reached, step, subject, now.Sub(p.Since).Round(time.Millisecond))
		if p.Cause != nil {
			msg += "; its last failure: " + p.Cause.Error()
		}
		if !p.Request && len(hosts) > 0 {
			msg += "; requests in flight to " + strings.Join(hosts, ", ")
		}
		c.add(Finding{Kind: KindDependencyUnreachable, Subject: subject, Message: msg})
	}
}
