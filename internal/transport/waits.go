package transport

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Waits records what a piece of work is waiting on, so that when its
// deadline passes it can tell a dependency it was waiting for from its own
// work (hashing, parsing, walking a graph), which no dependency is to blame
// for. A Client records each request whose context carries the Waits
// (WithWaits) under its host ("host:port"), from before the request waits
// for its host's slot to when its body is read to its end or closed,
// retries and their backoff included; a caller marks any other wait (a
// container runtime, a wait for a page to come up) with Begin, and keeps
// its last failure with Fail.
//
// What was pending when the context's deadline passed stays pending: an
// end that comes after it (the request gave up because of it) is ignored.
type Waits struct {
	ctx    context.Context
	mu     sync.Mutex
	active map[string]*waiting
	causes map[string]error
}

type waiting struct {
	n     int
	since time.Time
	host  bool
}

// Pending is a dependency being waited on.
type Pending struct {
	// Name is what was waited on: a host ("host:port") for a request,
	// the name given to Begin otherwise.
	Name string
	// Request is true for a request of a Client (Name is its host).
	Request bool
	// Since is when the oldest of its waits began; Calls how many were
	// in flight.
	Since time.Time
	Calls int
	// Cause is the last failure recorded for it (Fail), or nil.
	Cause error
}

type waitsKey struct{}

// WithWaits returns a context that carries a new Waits, and the Waits.
func WithWaits(ctx context.Context) (context.Context, *Waits) {
	w := &Waits{ctx: ctx, active: map[string]*waiting{}, causes: map[string]error{}}
	return context.WithValue(ctx, waitsKey{}, w), w
}

// WaitsFrom returns the Waits that ctx carries, or nil (whose methods do
// nothing).
func WaitsFrom(ctx context.Context) *Waits {
	w, _ := ctx.Value(waitsKey{}).(*Waits)
	return w
}

// Begin marks a wait for name until the returned end is called (end may be
// called more than once).
func (w *Waits) Begin(name string) (end func()) { return w.begin(name, false) }

func (w *Waits) begin(name string, host bool) (end func()) {
	if w == nil {
		return func() {}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		return func() {}
	}
	a := w.active[name]
	if a == nil {
		a = &waiting{since: time.Now(), host: host}
		w.active[name] = a
	}
	a.n++
	var once sync.Once
	return func() { once.Do(func() { w.end(name) }) }
}

func (w *Waits) end(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		return // pending at the deadline: it stays so
	}
	if a := w.active[name]; a != nil {
		if a.n--; a.n <= 0 {
			delete(w.active, name)
		}
	}
}

// Fail records err as the last failure of name (kept after its waits end,
// until the next Fail), unless the deadline has passed.
func (w *Waits) Fail(name string, err error) {
	if w == nil || err == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() == nil {
		w.causes[name] = err
	}
}

// Pending returns the waits in flight, the oldest first: once the context
// has ended, those that were in flight when it did.
func (w *Waits) Pending() []Pending {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Pending
	for name, a := range w.active {
		out = append(out, Pending{Name: name, Request: a.host, Since: a.since, Calls: a.n, Cause: w.causes[name]})
	}
	slices.SortFunc(out, func(a, b Pending) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
