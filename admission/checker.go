package admission

import (
	"errors"
	"sync"

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

func (c *checker) setStep(s string) {
	c.mu.Lock()
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
func (c *checker) unreachable(subject string, err error) {
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
