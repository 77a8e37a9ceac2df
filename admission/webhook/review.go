package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/imagename"
)

// MaxBodySize is the largest AdmissionReview body the handler reads, in
// bytes: 3 MiB, the API server's own request body limit.
const MaxBodySize = 3 << 20

// Options configure a Handler.
type Options struct {
	// Mode is Enforce (the default) or Warn.
	Mode Mode
	// Unmanaged is DenyUnmanaged (the default) or AllowUnmanaged.
	Unmanaged Unmanaged
	// Logger gets a line per denial or warning (default: discard).
	Logger  *slog.Logger
	Metrics *Metrics
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Names normalises image repositories for a routed handler
	// (NewRoutedHandler), with the registry aliases; each manifest's own
	// judging uses the Names it was accepted with.
	Names imagename.Names
}

// Handler answers admission.k8s.io/v1 AdmissionReviews (POST, JSON) with
// the decision on the object's images against the current manifest.
//
// HTTP errors: 405 for a method other than POST, 415 for a Content-Type
// other than application/json, 413 for a body over MaxBodySize, 400 for a
// body that is not an AdmissionReview v1 with a request and a uid (the API
// server then applies the webhook's failurePolicy). A review it decodes is
// always answered 200 with the request's uid; one it cannot judge is denied.
type Handler struct {
	routes []*route
	// routed is false for NewHandler's one manifest, judged as it always
	// was: every namespace, the repositories it pins.
	routed bool
	o      Options
}

// NewHandler returns a handler judging every pod against m.
func NewHandler(m Manifests, o Options) *Handler {
	return newHandler([]*route{{m: m}}, false, o)
}

// NewRoutedHandler returns a handler judging each pod's images against the
// releases rs route to its namespace (see Routes): for each image, the
// first route that applies to the namespace and governs the image's
// repository. An image no route governs is unmanaged (o.Unmanaged). A
// request is judged only once the manifest of every route that applies
// to its namespace is loaded and unexpired; until then it is denied. It
// returns a *RoutesError for a route without manifests or with an invalid
// repository.
func NewRoutedHandler(rs []RoutedManifests, o Options) (*Handler, error) {
	routes, err := newRoutes(rs, o.Names)
	if err != nil {
		return nil, err
	}
	return newHandler(routes, true, o), nil
}

func newHandler(routes []*route, routed bool, o Options) *Handler {
	if o.Mode == "" {
		o.Mode = Enforce
	}
	if o.Unmanaged == "" {
		o.Unmanaged = DenyUnmanaged
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handler{routes: routes, routed: routed, o: o}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.fail(w, start, http.StatusMethodNotAllowed, "method %s not allowed: POST an AdmissionReview", r.Method)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.fail(w, start, http.StatusUnsupportedMediaType, "content type %q: want application/json", r.Header.Get("Content-Type"))
		return
	}
	if r.ContentLength > MaxBodySize {
		h.fail(w, start, http.StatusRequestEntityTooLarge, "body of %d bytes is over the %d byte limit", r.ContentLength, MaxBodySize)
		return
	}
	buf := bodies.Get().(*bytes.Buffer)
	defer putBody(buf)
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBodySize))
	body := buf.Bytes()
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.fail(w, start, http.StatusRequestEntityTooLarge, "body is over the %d byte limit", MaxBodySize)
			return
		}
		h.fail(w, start, http.StatusBadRequest, "reading the body: %v", err)
		return
	}
	review, err := decodeReview(body)
	if err != nil {
		h.fail(w, start, http.StatusBadRequest, "%v", err)
		return
	}
	resp, decision := h.review(review.Request)
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	b, err := json.Marshal(&out)
	if err != nil { // cannot happen with these types; fail closed all the same
		h.fail(w, start, http.StatusInternalServerError, "encoding the response: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
	h.o.Metrics.request(decision, time.Since(start))
}

// bodies holds the buffers reviews are read into (what a review decodes
// to is copied out of it), so that a busy webhook does not allocate and
// grow one per request.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBody returns b to the pool, unless an unusually large review grew it.
func putBody(b *bytes.Buffer) {
	if b.Cap() > 256<<10 {
		return
	}
	b.Reset()
	bodies.Put(b)
}

// fail answers with an HTTP error: the API server applies the webhook's
// failurePolicy (Fail: the request is denied).
func (h *Handler) fail(w http.ResponseWriter, start time.Time, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.o.Logger.Warn("bad admission request", "code", code, "err", msg)
	http.Error(w, "lockstep: "+msg, code)
	h.o.Metrics.request(decisionError, time.Since(start))
}

// Review decides on one admission request, as ServeHTTP does for a
// request it decoded. The response carries the request's uid.
// A panic on the way to a decision is a denial.
func (h *Handler) Review(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp, _ := h.review(req)
	return resp
}

// review decides, and returns the decision for the metrics: allowed,
// denied, warned or error (not judged, so denied). It recovers from a
// panic with a denial: fail closed, and with an answer rather than a
// dropped connection.
func (h *Handler) review(req *admissionv1.AdmissionRequest) (resp *admissionv1.AdmissionResponse, decision string) {
	defer func() {
		if p := recover(); p != nil {
			h.o.Logger.Error("panic judging an admission request", "panic", p, "uid", req.UID)
			resp, decision = h.notJudged(&admissionv1.AdmissionResponse{UID: req.UID}, describe(req), nil, "internal error")
		}
	}()
	return h.decide(req)
}

func (h *Handler) decide(req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, string) {
	resp := &admissionv1.AdmissionResponse{UID: req.UID}
	subject := describe(req)
	switch {
	case req.Operation == admissionv1.Delete || req.Operation == admissionv1.Connect:
		resp.Allowed = true
		return resp, decisionAllowed
	case imagelessSubResources[req.SubResource]:
		// Only the main resource and pods/ephemeralcontainers can change
		// the images a pod runs (status, scale, binding, eviction, resize
		// cannot). The names match exactly: any other spelling is judged.
		resp.Allowed = true
		return resp, decisionAllowed
	case req.SubResource != "" && req.SubResource != "ephemeralcontainers":
		return h.notJudged(resp, subject, nil, fmt.Sprintf("lockstep does not judge the subresource %q", req.SubResource))
	}
	ls, why := h.loaded(req.Namespace)
	if why != "" {
		return h.notJudged(resp, subject, ls, why)
	}
	obj, err := decodePodObject(req.Kind, req.Object.Raw)
	if err != nil {
		if errors.Is(err, errNotJudged) {
			return h.notJudged(resp, subject, ls, fmt.Sprintf("lockstep does not judge %s", gvkString(req.Kind)))
		}
		return h.notJudged(resp, subject, ls, fmt.Sprintf("decoding the object: %v", err))
	}
	subject = describeObject(req, obj)
	if obj.kind != req.Kind {
		return h.notJudged(resp, subject, ls, fmt.Sprintf("the request says %s but the object is %s", gvkString(req.Kind), gvkString(obj.kind)))
	}
	if len(obj.spec.Containers) == 0 {
		return h.notJudged(resp, subject, ls, "the pod spec has no containers")
	}
	refs := images(obj.spec)
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		if old, err := decodePodObject(req.Kind, req.OldObject.Raw); err == nil {
			refs = changed(refs, images(old.spec))
		}
	}
	var findings []admission.Finding
	for _, ref := range refs {
		if f := h.judge(ls, ref, req.Namespace); f != nil {
			findings = append(findings, *f)
			h.o.Metrics.finding(f.Kind, h.o.Mode)
		}
	}
	ids := loadedIDs(ls)
	resp.AuditAnnotations = map[string]string{"release": ids}
	if len(ls) > 0 {
		ds := make([]string, len(ls))
		for i, l := range ls {
			ds[i] = l.a.Signed.Digest.String()
			if l.a.Unsigned {
				resp.AuditAnnotations["manifest-unsigned"] = "true"
			}
		}
		resp.AuditAnnotations["manifest-digest"] = strings.Join(ds, ",")
	}
	if len(findings) == 0 {
		resp.Allowed = true
		resp.AuditAnnotations["decision"] = decisionAllowed
		return resp, decisionAllowed
	}
	msgs := make([]string, len(findings))
	for i, f := range findings {
		msgs[i] = f.Message
	}
	if h.o.Mode == Warn {
		resp.Allowed = true
		resp.AuditAnnotations["decision"] = decisionWarned
		for _, m := range msgs {
			resp.Warnings = append(resp.Warnings, "lockstep (warn mode): "+m)
		}
		h.o.Logger.Warn("admitted in warn mode", "object", subject, "release", ids, "findings", strings.Join(msgs, "; "))
		return resp, decisionWarned
	}
	resp.AuditAnnotations["decision"] = decisionDenied
	what := "not release " + ids
	switch {
	case len(ls) == 0:
		what = "no route applies to namespace " + req.Namespace
	case len(ls) > 1:
		what = "not releases " + ids
	}
	resp.Result = denial(fmt.Sprintf("lockstep denied %s: %s: %s", subject, what, strings.Join(msgs, "; ")))
	h.o.Logger.Info("denied", "object", subject, "release", ids, "findings", strings.Join(msgs, "; "))
	return resp, decisionDenied
}

// loadedRoute is a route that applies to a request, with its current
// manifest.
type loadedRoute struct {
	r *route
	a *Accepted
}

// loaded returns the routes that apply to namespace with their manifests,
// or why the request cannot be judged: a manifest not loaded yet, or
// expired. Every route that applies must be judgeable, since any of them
// might govern one of the pod's images.
func (h *Handler) loaded(namespace string) ([]loadedRoute, string) {
	var ls []loadedRoute
	for _, r := range h.routes {
		if !r.appliesTo(namespace) {
			continue
		}
		a := r.m.Manifest()
		if a == nil {
			if !h.routed {
				return ls, "no verified release manifest is loaded yet"
			}
			return ls, fmt.Sprintf("no verified manifest of release %s is loaded yet", r.release)
		}
		ls = append(ls, loadedRoute{r, a})
		if a.Signed.Manifest.Expired(h.o.Now()) {
			return ls, fmt.Sprintf("release %s expired at %s", a.ID(), a.Signed.Manifest.Release.ExpiresAt.Format(time.RFC3339))
		}
	}
	return ls, ""
}

func loadedIDs(ls []loadedRoute) string {
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.a.ID()
	}
	return strings.Join(ids, ", ")
}

// judge returns the finding against one image, or nil: against the
// handler's one manifest, or against the first route that governs the
// image's repository.
func (h *Handler) judge(ls []loadedRoute, ref ImageRef, namespace string) *admission.Finding {
	if !h.routed {
		return ls[0].a.Judge(ref, h.o.Unmanaged)
	}
	finding := func(kind admission.Kind, format string, args ...any) *admission.Finding {
		reason := fmt.Sprintf(format, args...)
		return &admission.Finding{Kind: kind, Severity: admission.Refuse, Subject: ref.Subject(), Got: ref.Image,
			Message: fmt.Sprintf("%s image %q: %s", ref.Subject(), ref.Image, reason)}
	}
	if ref.Image == "" {
		return finding(admission.KindImageNotPinned, "no image")
	}
	parsed, err := h.o.Names.Reference(ref.Image)
	if err != nil {
		return finding(KindImageInvalid, "not a valid image reference: %v", err)
	}
	repo := parsed.Context().Name()
	var gov []loadedRoute
	for _, l := range ls {
		if l.r.governs(l.a, repo) {
			gov = append(gov, l)
		}
	}
	for _, g := range gov[min(1, len(gov)):] {
		if g.r.release != gov[0].r.release || g.a != gov[0].a {
			return finding(KindRoutesOverlap, "routes of releases %s and %s both govern repository %s in namespace %s: which release judges it would depend on the routes' order", gov[0].a.ID(), g.a.ID(), repo, namespace)
		}
	}
	if len(gov) > 0 {
		l := gov[0]
		if len(l.a.repos[repo]) == 0 {
			return finding(KindImageNotInRelease, "the routes give repository %s to release %s, whose manifest pins no image of it", repo, l.a.ID())
		}
		return l.a.Judge(ref, DenyUnmanaged)
	}
	if h.o.Unmanaged == AllowUnmanaged {
		return nil
	}
	if len(ls) == 0 {
		return finding(KindImageUnmanaged, "no route applies to namespace %s, so no release governs repository %s (unmanaged images are denied)", namespace, repo)
	}
	return finding(KindImageUnmanaged, "repository %s is governed by none of the releases routed to namespace %s (%s; unmanaged images are denied)", repo, namespace, loadedIDs(ls))
}

// imagelessSubResources are the subresources that cannot change the
// images a pod runs, spelled exactly as the API server names them.
var imagelessSubResources = map[string]bool{"status": true, "scale": true, "binding": true, "eviction": true, "resize": true}

// notJudged denies a request the webhook could not judge: fail closed, in
// either mode.
func (h *Handler) notJudged(resp *admissionv1.AdmissionResponse, subject string, ls []loadedRoute, why string) (*admissionv1.AdmissionResponse, string) {
	resp.Result = denial(fmt.Sprintf("lockstep denied %s: %s", subject, why))
	resp.AuditAnnotations = map[string]string{"decision": decisionError}
	if len(ls) > 0 {
		resp.AuditAnnotations["release"] = loadedIDs(ls)
	}
	h.o.Metrics.finding(KindNotJudged, h.o.Mode)
	h.o.Logger.Warn("denied, not judged", "object", subject, "reason", why)
	return resp, decisionError
}

func denial(msg string) *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Message: msg,
		Reason:  metav1.StatusReasonForbidden,
		Code:    http.StatusForbidden,
	}
}

// describe names the request's object for a message: "Pod store/web",
// "Pod in store" before the object (and its generateName) is decoded.
func describe(req *admissionv1.AdmissionRequest) string {
	s := req.Kind.Kind
	if req.SubResource != "" {
		s += " " + req.SubResource
	}
	switch {
	case req.Name != "" && req.Namespace != "":
		s += " " + req.Namespace + "/" + req.Name
	case req.Name != "":
		s += " " + req.Name
	case req.Namespace != "":
		s += " in " + req.Namespace
	}
	return s
}

// describeObject is describe with the object's generateName when the
// request has no name yet (a ReplicaSet's pods).
func describeObject(req *admissionv1.AdmissionRequest, obj *podObject) string {
	if req.Name == "" && obj.meta.GenerateName != "" {
		r := *req
		r.Name = obj.meta.GenerateName + "*"
		return describe(&r)
	}
	return describe(req)
}
