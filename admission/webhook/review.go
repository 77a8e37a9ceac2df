package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lockstep-dev/lockstep/admission"
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
	m Manifests
	o Options
}

// NewHandler returns a handler judging against m.
func NewHandler(m Manifests, o Options) *Handler {
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
	return &Handler{m: m, o: o}
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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodySize))
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

// fail answers with an HTTP error: the API server applies the webhook's
// failurePolicy (Fail: the request is denied).
func (h *Handler) fail(w http.ResponseWriter, start time.Time, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.o.Logger.Warn("bad admission request", "code", code, "err", msg)
	http.Error(w, "lockstep: "+msg, code)
	h.o.Metrics.request(decisionError, time.Since(start))
}

// decodeReview decodes an AdmissionReview v1 strictly enough: one JSON
// object, case-sensitive, no duplicate fields, the right apiVersion and
// kind, a request with a uid.
func decodeReview(body []byte) (*admissionv1.AdmissionReview, error) {
	var review admissionv1.AdmissionReview
	if err := strictUnmarshal(body, &review); err != nil {
		return nil, fmt.Errorf("decoding the AdmissionReview: %v", err)
	}
	if review.APIVersion != admissionv1.SchemeGroupVersion.String() || review.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("apiVersion %q kind %q: want %s AdmissionReview", review.APIVersion, review.Kind, admissionv1.SchemeGroupVersion)
	}
	if review.Request == nil {
		return nil, errors.New("the AdmissionReview has no request")
	}
	if review.Request.UID == "" {
		return nil, errors.New("the AdmissionReview request has no uid")
	}
	return &review, nil
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
	a := h.m.Manifest()
	if a == nil {
		return h.notJudged(resp, subject, nil, "no verified release manifest is loaded yet")
	}
	if a.Signed.Manifest.Expired(h.o.Now()) {
		return h.notJudged(resp, subject, a, fmt.Sprintf("release %s expired at %s", a.ID(), a.Signed.Manifest.Release.ExpiresAt.Format(time.RFC3339)))
	}
	obj, err := decodePodObject(req.Kind, req.Object.Raw)
	if err != nil {
		if errors.Is(err, errNotJudged) {
			return h.notJudged(resp, subject, a, fmt.Sprintf("lockstep does not judge %s", gvkString(req.Kind)))
		}
		return h.notJudged(resp, subject, a, fmt.Sprintf("decoding the object: %v", err))
	}
	subject = describeObject(req, obj)
	if obj.kind != req.Kind {
		return h.notJudged(resp, subject, a, fmt.Sprintf("the request says %s but the object is %s", gvkString(req.Kind), gvkString(obj.kind)))
	}
	if len(obj.spec.Containers) == 0 {
		return h.notJudged(resp, subject, a, "the pod spec has no containers")
	}
	refs := images(obj.spec)
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		if old, err := decodePodObject(req.Kind, req.OldObject.Raw); err == nil {
			refs = changed(refs, images(old.spec))
		}
	}
	var findings []admission.Finding
	for _, ref := range refs {
		if f := a.Judge(ref, h.o.Unmanaged); f != nil {
			findings = append(findings, *f)
			h.o.Metrics.finding(f.Kind, h.o.Mode)
		}
	}
	resp.AuditAnnotations = map[string]string{"release": a.ID(), "manifest-digest": a.Signed.Digest.String()}
	if a.Unsigned {
		resp.AuditAnnotations["manifest-unsigned"] = "true"
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
		h.o.Logger.Warn("admitted in warn mode", "object", subject, "release", a.ID(), "findings", strings.Join(msgs, "; "))
		return resp, decisionWarned
	}
	resp.AuditAnnotations["decision"] = decisionDenied
	resp.Result = denial(fmt.Sprintf("lockstep denied %s: not release %s: %s", subject, a.ID(), strings.Join(msgs, "; ")))
	h.o.Logger.Info("denied", "object", subject, "release", a.ID(), "findings", strings.Join(msgs, "; "))
	return resp, decisionDenied
}

// imagelessSubResources are the subresources that cannot change the
// images a pod runs, spelled exactly as the API server names them.
var imagelessSubResources = map[string]bool{"status": true, "scale": true, "binding": true, "eviction": true, "resize": true}

// notJudged denies a request the webhook could not judge: fail closed, in
// either mode.
func (h *Handler) notJudged(resp *admissionv1.AdmissionResponse, subject string, a *Accepted, why string) (*admissionv1.AdmissionResponse, string) {
	resp.Result = denial(fmt.Sprintf("lockstep denied %s: %s", subject, why))
	resp.AuditAnnotations = map[string]string{"decision": decisionError}
	if a != nil {
		resp.AuditAnnotations["release"] = a.ID()
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
