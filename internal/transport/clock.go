package transport

import "time"

// Clock is the time a Client keeps: when a host's circuit breaker opens
// and when its cool-down ends, how far off a Retry-After date is, and how
// long a retry waits. The default is the system's; a test gives its own
// (WithClock) and moves it, instead of sleeping past a cool-down or a
// backoff on a machine too busy to keep a sleep's promise.
type Clock interface {
	Now() time.Time
	// After waits d, then sends the time, as time.After.
	After(d time.Duration) <-chan time.Time
}

// systemClock is the system's time.
type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// WithClock makes clock the client's time (Clock). A nil clock keeps the
// system's.
func WithClock(clock Clock) Option {
	return func(c *Client) {
		if clock != nil {
			c.clock = clock
			c.breakers.now = clock.Now
		}
	}
}
