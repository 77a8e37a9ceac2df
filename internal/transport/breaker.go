package transport

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// A host's circuit breaker, one per host of a Client, shared by all the
// client's requests to it (HTTPClient's; Transport's callers keep their own
// retryers). It exists for the outage: the retry budget bounds the retries
// of one client, but every request still sends its first attempt, and a
// fleet of fresh clients each spends its whole budget at the first failure.
// The breaker makes a host that keeps failing cost nothing more:
//
//   - closed: requests go; BreakerFailures retryable failures in a row
//     (503s, timeouts, refused connections; any other answer resets the
//     count) open it;
//   - open: requests fail at once with a *CircuitOpenError, nothing sent,
//     for a cool-down drawn uniformly from [c/2, c], c = BreakerCooldown
//     doubled for every failed probe, capped at MaxDelay;
//   - half-open: after the cool-down one request goes, the probe (the
//     others still fail at once); an answer closes the breaker, a failure
//     opens it for the next cool-down.
//
// A request whose attempt opens the breaker is not retried: its caller gets
// that attempt's response or error. The jitter spreads the probes of a
// thousand clients opened in the same second, and a client never replays
// what it refused, so the recovery comes in at the rate the callers ask,
// without a burst.

// CircuitOpenError is a request that was not sent because its host's
// breaker is open: the host failed Failures times in a row and is not
// asked again before Until. It is retryable (RetryableError): a caller
// waiting for the host (transport.Until) asks again at Until.
type CircuitOpenError struct {
	Host     string
	Failures int
	// Until is when the host is asked again (by one request, the probe);
	// Wait is how long that was from the refusal.
	Until time.Time
	Wait  time.Duration
}

func (e *CircuitOpenError) Error() string {
	return fmt.Sprintf("%s failed %d times in a row: not asked again for %s (circuit open)", e.Host, e.Failures, e.Wait.Round(time.Millisecond))
}

// breakers holds the breaker of every host that has failed since it last
// answered; a host that answers has no entry, so a fleet of 100,000
// healthy hosts costs nothing here.
type breakers struct {
	failures int           // in a row, to open; <= 0 disables
	cooldown time.Duration // the first open period
	max      time.Duration // the longest
	mu       sync.Mutex
	hosts    map[string]*breaker
	now      func() time.Time
}

type breaker struct {
	failures int       // in a row
	opens    int       // times opened since the host last answered
	until    time.Time // open until; zero while closed
	probing  bool      // the half-open probe is in flight
}

func newBreakers(p Policy) *breakers {
	return &breakers{failures: p.BreakerFailures, cooldown: p.BreakerCooldown, max: max(p.MaxDelay, p.BreakerCooldown),
		hosts: map[string]*breaker{}, now: time.Now}
}

// allow reports whether a request to host may be sent now; probe is true
// when it is the half-open probe, whose outcome must be reported (done).
func (bs *breakers) allow(host string) (probe bool, err error) {
	if bs.failures <= 0 {
		return false, nil
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.hosts[host]
	if b == nil || b.until.IsZero() {
		return false, nil
	}
	if now := bs.now(); now.Before(b.until) || b.probing {
		return false, &CircuitOpenError{Host: host, Failures: b.failures, Until: b.until, Wait: max(b.until.Sub(now), 0)}
	}
	b.probing = true
	return true, nil
}

// outcome is what an attempt's result says about its host.
type outcome int

const (
	// neutral: says nothing of the host (the caller cancelled, a TLS or
	// redirect refusal).
	neutral outcome = iota
	// answered: the host answered (anything but a retryable failure).
	answered
	// failed: a retryable failure (a 429/502/503/504, a timeout, a reset).
	failed
)

// done records the outcome of an attempt to host (probe: it was the
// half-open probe) and reports whether the breaker is now open.
func (bs *breakers) done(host string, probe bool, o outcome) (open bool) {
	if bs.failures <= 0 {
		return false
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.hosts[host]
	switch o {
	case answered:
		delete(bs.hosts, host)
		return false
	case neutral:
		if b != nil && probe {
			b.probing = false
		}
		return b != nil && !b.until.IsZero()
	}
	if b == nil {
		b = &breaker{}
		bs.hosts[host] = b
	}
	b.failures++
	if probe {
		b.probing = false
	} else if !b.until.IsZero() || b.failures < bs.failures {
		// Already open (an attempt sent before it opened), or not yet.
		return !b.until.IsZero()
	}
	c := bs.cooldown << min(b.opens, 30)
	if c <= 0 || c > bs.max {
		c = bs.max
	}
	b.opens++
	b.until = bs.now().Add(c/2 + time.Duration(rand.Int64N(int64(c/2)+1)))
	return true
}
