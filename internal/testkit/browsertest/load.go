package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// LoadOptions configure a Load.
type LoadOptions struct {
	// Hosts maps a host:port a page names (e.g. "cdn.example.test:443")
	// to the loopback address that serves it ("127.0.0.1:PORT"). Every
	// other host but loopback is refused.
	Hosts map[string]string
	// Idle is how long no request may be in flight for the network to be
	// idle: 500 ms by default.
	Idle time.Duration
	// Stay keeps the page open at least this long after the navigation
	// before the last wait for idle: a visitor who stays, for what a page
	// starts late. With Until, it is the most the load waits for Until
	// instead.
	Stay time.Duration
	// Until is a JavaScript expression, evaluated in the page once it has
	// settled and been scrolled: the load waits for its value (a promise
	// is awaited), at most until Stay after the navigation (without
	// Stay, until the timeout), then for idle again. It is the event a fixed Stay would wait out: e.g.
	// "navigator.serviceWorker.ready" for a page that registers its
	// service worker late (Angular registers it when the app is stable,
	// or after 30 s). Page.UntilMet says whether it came in time; an
	// expression that throws or rejects is the load's error.
	Until string
	// Timeout bounds the whole load: 60 s by default, Stay added. Requests still in
	// flight when it ends are returned with Pending set.
	Timeout time.Duration
}

// Request is one request a page made, or one hop of a redirect.
type Request struct {
	// URL is the requested URL.
	URL string
	// Type is the resource type the browser gives it (Document,
	// Stylesheet, Script, Font, Image, Fetch, XHR, Prefetch, Manifest,
	// Other...).
	Type string
	// Initiator says what made the request: its type (parser, script,
	// preload, other...) and, where known, the URL and line of the
	// document or script (the top of the stack) that made it.
	Initiator string
	// Target is the kind of target that made it: page, iframe, worker,
	// shared_worker or service_worker.
	Target string
	// Status is the HTTP status of its response, 0 if none came.
	Status int
	// Failed is the browser's error text for a request that failed
	// (net::ERR_..., with the reason a request was blocked).
	Failed string
	// Pending is set for a request still in flight at the timeout.
	Pending bool
	// FromServiceWorker is set when a service worker answered it.
	FromServiceWorker bool

	answered bool
}

func (r Request) String() string {
	return fmt.Sprintf("%s %s (%s, from the %s, by %s)", r.Type, r.URL, r.outcome(), r.Target, r.Initiator)
}

func (r Request) outcome() string {
	switch {
	case r.Pending:
		return "pending"
	case r.Failed != "":
		return "failed: " + r.Failed
	default:
		return fmt.Sprint(r.Status)
	}
}

// Page is what a Load saw.
type Page struct {
	// Requests are every request the page and its frames and workers
	// made, in the order they were made.
	Requests []Request
	// Links are the URLs of the page's links (<a href>, <area href>) at
	// the end, absolute, each once, in document order: what a crawl
	// follows.
	Links []string
	// UntilMet is set when LoadOptions.Until's value came within Stay.
	UntilMet bool
}

// Load opens url in a fresh browser context, waits until its network is
// idle (no request in flight for opts.Idle), scrolls it to the bottom a
// viewport at a time, waits until idle again, and returns every request
// the page and its frames and workers made, and its links. Its error is
// for a load that could not be made (the browser gone, a navigation
// refused); a page that answers an error status is no error.
func (b *Browser) Load(ctx context.Context, url string, opts LoadOptions) (*Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if opts.Idle <= 0 {
		opts.Idle = 500 * time.Millisecond
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	// The waits end at the timeout; the calls that read what was seen
	// then have a little longer.
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout+opts.Stay+15*time.Second)
	defer cancel()
	waitCtx, cancelWait := context.WithTimeout(ctx, opts.Timeout+opts.Stay)
	defer cancelWait()
	px, err := startProxy(opts.Hosts)
	if err != nil {
		return nil, err
	}
	defer px.close()

	br := b.rod.Context(ctx)
	rec := newRecorder()
	// Subscribe before anything is created, so no event is missed.
	events := br.Event()
	bc, err := proto.TargetCreateBrowserContext{DisposeOnDetach: true, ProxyServer: "http://" + px.addr()}.Call(br)
	if err != nil {
		return nil, fmt.Errorf("creating a browser context: %w", err)
	}
	defer proto.TargetDisposeBrowserContext{BrowserContextID: bc.BrowserContextID}.Call(b.rod)
	rec.context = bc.BrowserContextID
	done := make(chan struct{})
	go func() {
		defer close(done)
		for msg := range events {
			rec.handle(br, msg)
		}
	}()
	defer func() { cancel(); <-done }()

	tg, err := proto.TargetCreateTarget{URL: "about:blank", BrowserContextID: bc.BrowserContextID}.Call(br)
	if err != nil {
		return nil, fmt.Errorf("opening a page: %w", err)
	}
	session, err := rec.sessionOf(ctx, tg.TargetID)
	if err != nil {
		return nil, fmt.Errorf("attaching to the page: %w", err)
	}
	page := br.PageFromSession(session)
	if _, err := (proto.PageNavigate{URL: url}).Call(page); err != nil {
		return nil, fmt.Errorf("navigating to %s: %w", url, err)
	}
	var stay <-chan time.Time // nil: Until bounded by the timeout alone
	if opts.Until == "" || opts.Stay > 0 {
		stay = time.After(opts.Stay)
	}
	waiting := b.rod.Context(waitCtx).PageFromSession(session)
	settle(waitCtx, waiting, rec, opts.Idle, true)
	// Scroll to the bottom, a viewport at a time, so that what loads when
	// it becomes visible (lazy images, islands) loads.
	const scroll = `(async () => {
  for (let i = 0; i < 200; i++) {
    const before = window.scrollY;
    window.scrollBy(0, Math.max(window.innerHeight, 200));
    await new Promise(r => setTimeout(r, 50));
    if (window.scrollY === before) break;
  }
})()`
	if _, err := (proto.RuntimeEvaluate{Expression: scroll, AwaitPromise: true}).Call(waiting); err != nil && waitCtx.Err() == nil {
		return nil, fmt.Errorf("scrolling %s: %w", url, err)
	}
	settle(waitCtx, waiting, rec, opts.Idle, false)
	met := false
	if opts.Until != "" {
		if met, err = until(waitCtx, b.rod, session, opts.Until, stay); err != nil {
			return nil, fmt.Errorf("waiting on %s for %s: %w", url, opts.Until, err)
		}
	} else {
		select {
		case <-stay:
		case <-waitCtx.Done():
		}
	}
	settle(waitCtx, waiting, rec, opts.Idle, false)
	const links = `JSON.stringify([...new Set([...document.querySelectorAll('a[href], area[href]')].map(a => a.href))])`
	res, err := proto.RuntimeEvaluate{Expression: links, ReturnByValue: true}.Call(page)
	if err != nil {
		return nil, fmt.Errorf("reading the links of %s: %w", url, err)
	}
	p := &Page{Requests: rec.requests(), UntilMet: met}
	if err := json.Unmarshal([]byte(res.Result.Value.Str()), &p.Links); err != nil {
		return nil, fmt.Errorf("reading the links of %s: %w", url, err)
	}
	return p, nil
}

// until waits for the value of the expression in the page of session, or
// for stay or ctx to end first (met false). An expression that throws or
// rejects is an error.
func until(ctx context.Context, br *rod.Browser, session proto.TargetSessionID, expr string, stay <-chan time.Time) (met bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stay:
			cancel()
		case <-ctx.Done():
		}
	}()
	res, err := proto.RuntimeEvaluate{Expression: "(async () => { await (" + expr + "\n); return true })()", AwaitPromise: true}.Call(br.Context(ctx).PageFromSession(session))
	if ctx.Err() != nil {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if res.ExceptionDetails != nil {
		return false, fmt.Errorf("%s", exception(res.ExceptionDetails))
	}
	return true, nil
}

// exception is what a thrown or rejected value says.
func exception(d *proto.RuntimeExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// settle waits until the page is settled: its network idle (see
// waitIdle), then its main thread idle too (a requestIdleCallback, which
// is also when frameworks prefetch), with no request made meanwhile. On a
// busy machine a script can run longer than the idle time between two
// requests; the main thread's idle callback waits it out.
func settle(ctx context.Context, page *rod.Page, rec *recorder, idle time.Duration, load bool) {
	const idleCallback = `new Promise(r => requestIdleCallback(() => setTimeout(r, 0), {timeout: 10000}))`
	for range 20 {
		rec.waitIdle(ctx, idle, load)
		before := rec.count()
		if _, err := (proto.RuntimeEvaluate{Expression: idleCallback, AwaitPromise: true}).Call(page); err != nil || ctx.Err() != nil {
			return
		}
		if rec.count() == before {
			rec.waitIdle(ctx, idle, load)
			if rec.count() == before {
				return
			}
		}
	}
}
