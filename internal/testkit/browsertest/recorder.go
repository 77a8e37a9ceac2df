package browsertest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// recorder keeps the requests of one load, from the events of every
// session of its browser context.
type recorder struct {
	context proto.BrowserBrowserContextID

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	sessions map[proto.TargetSessionID]session
	targets  map[proto.TargetTargetID]proto.TargetSessionID
	list     []*Request
	inFlight map[key]*Request
	loaded   bool
	last     time.Time
}

// session is an attached session: the kind of its target, and the
// target (a service worker is attached twice, by the browser and by its
// page, and both sessions report its requests, with the same ids).
type session struct {
	kind   string
	target proto.TargetTargetID
}

// key is a request of a target.
type key struct {
	target proto.TargetTargetID
	id     proto.NetworkRequestID
}

func newRecorder() *recorder {
	return &recorder{changed: make(chan struct{}), sessions: map[proto.TargetSessionID]session{},
		targets: map[proto.TargetTargetID]proto.TargetSessionID{}, inFlight: map[key]*Request{}, last: time.Now()}
}

// touch marks a change; r.mu is held.
func (r *recorder) touch() {
	r.last = time.Now()
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) handle(br *rod.Browser, msg *rod.Message) {
	var attached proto.TargetAttachedToTarget
	if msg.Load(&attached) {
		r.attach(br, msg.SessionID, attached)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sess, ours := r.sessions[msg.SessionID]
	if !ours {
		return
	}

	var (
		sent     proto.NetworkRequestWillBeSent
		resp     proto.NetworkResponseReceived
		finished proto.NetworkLoadingFinished
		failed   proto.NetworkLoadingFailed
		load     proto.PageLoadEventFired
	)
	switch {
	case msg.Load(&sent):
		k := key{sess.target, sent.RequestID}
		prev := r.inFlight[k]
		if prev != nil && prev.URL == sent.Request.URL {
			return // the same request, from the target's other session
		}
		if prev != nil && sent.RedirectResponse != nil {
			prev.Status = sent.RedirectResponse.Status
		}
		req := &Request{URL: sent.Request.URL, Type: string(sent.Type), Initiator: initiator(sent.Initiator), Target: sess.kind}
		r.list = append(r.list, req)
		r.inFlight[k] = req
	case msg.Load(&resp):
		if req := r.inFlight[key{sess.target, resp.RequestID}]; req != nil {
			// The answer is known: the request no longer holds the
			// network busy (a worker's script never finishes on the
			// page's session).
			req.answered = true
			req.Status = resp.Response.Status
			req.FromServiceWorker = resp.Response.FromServiceWorker
			if req.Type == "" {
				req.Type = string(resp.Type)
			}
		}
	case msg.Load(&finished):
		delete(r.inFlight, key{sess.target, finished.RequestID})
	case msg.Load(&failed):
		k := key{sess.target, failed.RequestID}
		if req := r.inFlight[k]; req != nil {
			req.Failed = failed.ErrorText
			if failed.BlockedReason != "" {
				req.Failed += " (blocked: " + string(failed.BlockedReason) + ")"
			}
			if failed.CorsErrorStatus != nil {
				req.Failed += " (CORS: " + string(failed.CorsErrorStatus.CorsError) + ")"
			}
			if req.Type == "" {
				req.Type = string(failed.Type)
			}
		}
		delete(r.inFlight, k)
	case msg.Load(&load):
		if sess.kind == "page" {
			r.loaded = true
		}
	default:
		return
	}
	r.touch()
}

// attach takes a target that was attached (paused) in: a target of this
// load's browser context, or one attached from a session of it (a worker,
// a frame), has its network events turned on, and the targets it starts
// attached in turn; every target is then resumed.
func (r *recorder) attach(br *rod.Browser, from proto.TargetSessionID, ev proto.TargetAttachedToTarget) {
	info := ev.TargetInfo
	r.mu.Lock()
	_, parentOurs := r.sessions[from]
	ours := (parentOurs || info.BrowserContextID == r.context) && kinds[string(info.Type)]
	if ours && (info.Type == "worker" || info.Type == "shared_worker" || info.Type == "service_worker") {
		// The worker runs, so its script came: the page's request for
		// it is answered (its session reports no more of it).
		for _, req := range r.inFlight {
			if req.URL == info.URL {
				req.answered = true
			}
		}
	}
	if ours {
		r.sessions[ev.SessionID] = session{string(info.Type), info.TargetID}
		r.targets[info.TargetID] = ev.SessionID
		r.touch()
	}
	r.mu.Unlock()
	s := br.PageFromSession(ev.SessionID)
	go func() {
		if ours {
			// A service worker answers none of these until it runs:
			// they are sent, then the target is resumed after at most a
			// second, and they take effect in the order sent. Errors are
			// a target that went away meanwhile: it makes no more
			// requests.
			var wg sync.WaitGroup
			wg.Go(func() { _ = proto.NetworkEnable{}.Call(s) })
			if info.Type == "page" || info.Type == "iframe" {
				wg.Go(func() { _ = proto.PageEnable{}.Call(s) })
			}
			wg.Go(func() {
				_ = proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}.Call(s)
			})
			sent := make(chan struct{})
			go func() { wg.Wait(); close(sent) }()
			select {
			case <-sent:
			case <-time.After(time.Second):
			}
		}
		if ev.WaitingForDebugger {
			_ = proto.RuntimeRunIfWaitingForDebugger{}.Call(s)
		}
	}()
}

// kinds are the kinds of targets whose requests a page makes.
var kinds = map[string]bool{"page": true, "iframe": true, "worker": true, "shared_worker": true, "service_worker": true}

// sessionOf waits for the target to be attached and returns its session.
func (r *recorder) sessionOf(ctx context.Context, id proto.TargetTargetID) (proto.TargetSessionID, error) {
	for {
		r.mu.Lock()
		s, ok := r.targets[id]
		changed := r.changed
		r.mu.Unlock()
		if ok {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-changed:
		}
	}
}

// waitIdle waits until no request has been in flight for idle (and, with
// load, the page's load event has fired), or ctx ends.
func (r *recorder) waitIdle(ctx context.Context, idle time.Duration, load bool) {
	for {
		r.mu.Lock()
		busy := 0
		for _, req := range r.inFlight {
			if !req.answered {
				busy++
			}
		}
		quiet := busy == 0 && (!load || r.loaded)
		wait := idle - time.Since(r.last)
		changed := r.changed
		r.mu.Unlock()
		if quiet && wait <= 0 {
			return
		}
		if !quiet {
			wait = idle
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// count returns how many requests were made.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.list)
}

// requests returns the requests made, those in flight marked pending.
func (r *recorder) requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Request, 0, len(r.list))
	for _, req := range r.list {
		c := *req
		for _, p := range r.inFlight {
			if p == req && !p.answered {
				c.Pending = true
			}
		}
		out = append(out, c)
	}
	return out
}

// initiator formats what made a request.
func initiator(in *proto.NetworkInitiator) string {
	if in == nil {
		return "unknown"
	}
	s := string(in.Type)
	where, line := in.URL, -1
	if in.LineNumber != nil {
		line = int(*in.LineNumber)
	}
	for st := in.Stack; st != nil && where == ""; st = st.Parent {
		for _, f := range st.CallFrames {
			if f.URL != "" {
				where, line = f.URL, f.LineNumber
				break
			}
		}
	}
	if where != "" {
		s += " " + where
		if line >= 0 {
			s += fmt.Sprintf(":%d", line+1)
		}
	}
	return s
}
