package webhook

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden is what testdata/responses holds for one request: the HTTP status
// and either the AdmissionReview answered or the error body.
type golden struct {
	Code   int             `json:"code"`
	Review json.RawMessage `json:"review,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// post sends body to h as the API server does and returns the response.
func post(t testing.TB, h http.Handler, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/validate?timeout=5s", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "requests", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFixtures sends each AdmissionReview fixture (as the API server sends
// them) and compares the answer with its golden response.
func TestFixtures(t *testing.T) {
	a := accepted(t, testManifest(42))
	handlers := map[string]*Handler{
		"enforce":         NewHandler(Fixed{a}, Options{}),
		"warn":            NewHandler(Fixed{a}, Options{Mode: Warn}),
		"allow-unmanaged": NewHandler(Fixed{a}, Options{Unmanaged: AllowUnmanaged}),
		"no-manifest":     NewHandler(Fixed{}, Options{}),
	}
	tests := []struct {
		request, handler string
		code             int
		allowed          bool
	}{
		{"pod-allowed.json", "enforce", 200, true},
		{"pod-unpinned.json", "enforce", 200, false},
		{"pod-moved-tag.json", "enforce", 200, false},
		{"pod-init-foreign-digest.json", "enforce", 200, false},
		{"pod-unmanaged.json", "enforce", 200, false},
		{"pod-unmanaged.json", "allow-unmanaged", 200, true},
		{"pod-image-volume.json", "enforce", 200, false},
		{"pod-invalid-reference.json", "enforce", 200, false},
		{"pod-duplicate-image.json", "enforce", 200, false},
		{"deployment.json", "enforce", 200, true},
		{"replicaset.json", "enforce", 200, false},
		{"statefulset.json", "enforce", 200, true},
		{"daemonset.json", "enforce", 200, false},
		{"job.json", "enforce", 200, true},
		{"cronjob.json", "enforce", 200, false},
		{"pod-ephemeral.json", "enforce", 200, false},
		{"pod-ephemeral-allowed.json", "enforce", 200, true},
		{"pod-update.json", "enforce", 200, false},
		{"pod-update-unchanged-images.json", "enforce", 200, true},
		{"pod-status.json", "enforce", 200, true},
		{"pod-delete.json", "enforce", 200, true},
		{"pod-delete.json", "no-manifest", 200, true},
		{"unsupported-kind.json", "enforce", 200, false},
		{"pod-allowed.json", "no-manifest", 200, false},
		{"pod-moved-tag.json", "warn", 200, true},
		{"daemonset.json", "warn", 200, true},
		{"malformed.json", "enforce", 400, false},
		{"not-a-review.json", "enforce", 400, false},
	}
	for _, tt := range tests {
		name := strings.TrimSuffix(tt.request, ".json")
		if tt.handler != "enforce" {
			name += "." + tt.handler
		}
		t.Run(name, func(t *testing.T) {
			body := readFixture(t, tt.request)
			rec := post(t, handlers[tt.handler], body)
			if rec.Code != tt.code {
				t.Fatalf("POST %s: status %d, want %d; body %s", tt.request, rec.Code, tt.code, rec.Body)
			}
			got := golden{Code: rec.Code}
			if rec.Code == http.StatusOK {
				checkResponse(t, body, rec.Body.Bytes(), tt.allowed)
				var indented bytes.Buffer
				if err := json.Indent(&indented, rec.Body.Bytes(), "", "  "); err != nil {
					t.Fatal(err)
				}
				got.Review = indented.Bytes()
			} else {
				got.Error = rec.Body.String()
			}
			compareGolden(t, filepath.Join("testdata", "responses", name+".json"), got)
		})
	}
}

// checkResponse checks the invariants of every answer: the review's
// apiVersion and kind, the request's uid, and the decision.
func checkResponse(t testing.TB, reqBody, respBody []byte, allowed bool) {
	t.Helper()
	var req, resp admissionv1.AdmissionReview
	if err := json.Unmarshal(reqBody, &req); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(respBody, &resp); err != nil {
		t.Fatalf("response is not an AdmissionReview: %v\n%s", err, respBody)
	}
	if resp.APIVersion != "admission.k8s.io/v1" || resp.Kind != "AdmissionReview" {
		t.Errorf("response apiVersion %q kind %q, want admission.k8s.io/v1 AdmissionReview", resp.APIVersion, resp.Kind)
	}
	if resp.Response == nil {
		t.Fatalf("response has no response: %s", respBody)
	}
	if resp.Response.UID != req.Request.UID {
		t.Errorf("response uid %q, want the request's %q", resp.Response.UID, req.Request.UID)
	}
	if resp.Response.Allowed != allowed {
		t.Errorf("allowed = %v, want %v (status %+v, warnings %q)", resp.Response.Allowed, allowed, resp.Response.Result, resp.Response.Warnings)
	}
	if !resp.Response.Allowed && (resp.Response.Result == nil || resp.Response.Result.Message == "" || resp.Response.Result.Code != 403) {
		t.Errorf("a denial without a 403 status and message: %+v", resp.Response.Result)
	}
}

func compareGolden(t testing.TB, path string, got golden) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("response differs from %s (run with -update to accept):\ngot:\n%s\nwant:\n%s", path, b, want)
	}
}

// TestDenialMessages checks that the denials a user meets most name the
// container, the image and the reason.
func TestDenialMessages(t *testing.T) {
	h := NewHandler(Fixed{accepted(t, testManifest(42))}, Options{})
	tests := []struct {
		request string
		want    []string
	}{
		{"pod-moved-tag.json", []string{
			`lockstep denied Pod store/web: not release store-web@42`,
			`container "web" image "registry.lockstep.test/store/web:v1.4.2@sha256:bbbb`,
			`tag "v1.4.2" moved: the pod asks for sha256:bbbb`,
			`release store-web@42 pins registry.lockstep.test/store/web:v1.4.2 at sha256:1111`,
		}},
		{"pod-unpinned.json", []string{
			`container "web" image "registry.lockstep.test/store/web:v1.4.2": tag "v1.4.2" is not pinned by digest`,
			`release store-web@42 pins registry.lockstep.test/store/web@sha256:1111`,
		}},
		{"pod-init-foreign-digest.json", []string{
			`init container "migrate" image "registry.lockstep.test/store/migrate@sha256:cccc`,
			`digest sha256:cccc`,
			`is not one of release store-web@42's digests for registry.lockstep.test/store/migrate (sha256:6666`,
		}},
		{"pod-unmanaged.json", []string{
			`container "exporter" image "quay.io/prometheus/node-exporter:v1.8.2": repository quay.io/prometheus/node-exporter is not governed by release store-web@42 (unmanaged images are denied)`,
		}},
		{"pod-ephemeral.json", []string{
			`Pod ephemeralcontainers store/web-7d4b9c8f6-x2x9q`,
			`ephemeral container "debugger-7xk2p" image "busybox:1.36": repository busybox (index.docker.io/library/busybox) is not governed`,
		}},
		{"cronjob.json", []string{`CronJob store/nightly`, `container "migrate"`, `tag "v1.4.2" moved`}},
		{"pod-image-volume.json", []string{`image volume "models" image "registry.lockstep.test/store/web:models": tag "models" is not pinned by digest`}},
		{"pod-duplicate-image.json", []string{`decoding the object`, `duplicate object member name "image" within "/spec/containers/0"`}},
		{"unsupported-kind.json", []string{`lockstep does not judge v1 Service`}},
	}
	for _, tt := range tests {
		rec := post(t, h, readFixture(t, tt.request))
		var resp admissionv1.AdmissionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Response == nil || resp.Response.Result == nil {
			t.Fatalf("%s: no denial in %s (%v)", tt.request, rec.Body, err)
		}
		msg := resp.Response.Result.Message
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message\n  %s\ndoes not contain\n  %s", tt.request, msg, w)
			}
		}
	}
}

// TestWarnMode checks that warn mode admits, warns and records the finding.
func TestWarnMode(t *testing.T) {
	m := NewMetrics()
	var logs bytes.Buffer
	h := NewHandler(Fixed{accepted(t, testManifest(42))}, Options{Mode: Warn, Metrics: m, Logger: newTestLogger(&logs)})
	rec := post(t, h, readFixture(t, "pod-moved-tag.json"))
	var resp admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	r := resp.Response
	if !r.Allowed || r.Result != nil {
		t.Errorf("warn mode: allowed=%v status=%+v, want allowed without a status", r.Allowed, r.Result)
	}
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "lockstep (warn mode): container \"web\"") || !strings.Contains(r.Warnings[0], "moved") {
		t.Errorf("warnings = %q, want one naming the container and the moved tag", r.Warnings)
	}
	if r.AuditAnnotations["decision"] != "warned" {
		t.Errorf("audit annotations %v, want decision=warned", r.AuditAnnotations)
	}
	if !strings.Contains(logs.String(), "admitted in warn mode") || !strings.Contains(logs.String(), "moved") {
		t.Errorf("log does not record the finding:\n%s", logs.String())
	}
	metrics := scrape(t, m)
	for _, want := range []string{
		`lockstep_webhook_requests_total{decision="warned"} 1`,
		`lockstep_webhook_findings_total{kind="image-digest-mismatch",mode="warn"} 1`,
		`lockstep_webhook_request_duration_seconds_count 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestHTTPErrors checks what the handler refuses before it decodes a
// review: the API server then applies the failurePolicy.
func TestHTTPErrors(t *testing.T) {
	m := NewMetrics()
	h := NewHandler(Fixed{accepted(t, testManifest(42))}, Options{Metrics: m})
	body := readFixture(t, "pod-allowed.json")
	oversized := append(append([]byte(nil), body[:len(body)-2]...), []byte(`,"padding":"`+strings.Repeat("x", MaxBodySize)+`"}`)...)
	tests := []struct {
		name, method, contentType string
		body                      []byte
		chunked                   bool
		want                      int
	}{
		{"GET", http.MethodGet, "application/json", nil, false, http.StatusMethodNotAllowed},
		{"PUT", http.MethodPut, "application/json", body, false, http.StatusMethodNotAllowed},
		{"text/plain", http.MethodPost, "text/plain", body, false, http.StatusUnsupportedMediaType},
		{"no content type", http.MethodPost, "", body, false, http.StatusUnsupportedMediaType},
		{"json with charset", http.MethodPost, "application/json; charset=utf-8", body, false, http.StatusOK},
		{"oversized", http.MethodPost, "application/json", oversized, false, http.StatusRequestEntityTooLarge},
		{"oversized without a length", http.MethodPost, "application/json", oversized, true, http.StatusRequestEntityTooLarge},
		{"empty", http.MethodPost, "application/json", []byte{}, false, http.StatusBadRequest},
		{"trailing data", http.MethodPost, "application/json", append(append([]byte(nil), body...), []byte(`{}`)...), false, http.StatusBadRequest},
		{"no request", http.MethodPost, "application/json", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), false, http.StatusBadRequest},
		{"no uid", http.MethodPost, "application/json", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}`), false, http.StatusBadRequest},
		{"duplicate uid", http.MethodPost, "application/json", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","uid":"b"}}`), false, http.StatusBadRequest},
		{"wrong case", http.MethodPost, "application/json", []byte(`{"ApiVersion":"admission.k8s.io/v1","Kind":"AdmissionReview","request":{"uid":"a"}}`), false, http.StatusBadRequest},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, "/validate", bytes.NewReader(tt.body))
		if tt.chunked {
			req.ContentLength = -1
		}
		if tt.contentType != "" {
			req.Header.Set("Content-Type", tt.contentType)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: status %d, want %d (%s)", tt.name, rec.Code, tt.want, strings.TrimSpace(rec.Body.String()))
		}
		if strings.HasPrefix(tt.name, "oversized") {
			compareGolden(t, filepath.Join("testdata", "responses", strings.ReplaceAll(tt.name, " ", "-")+".json"),
				golden{Code: rec.Code, Error: rec.Body.String()})
		}
	}
	if got := scrape(t, m); !strings.Contains(got, `lockstep_webhook_requests_total{decision="error"} 12`) {
		t.Errorf("the refused requests are not counted as errors:\n%s", grep(got, "requests_total"))
	}
}

// TestExpiredManifest checks that reviews are denied once the manifest
// expires.
func TestExpiredManifest(t *testing.T) {
	m := testManifest(42)
	exp := createdAt.Add(time.Hour)
	m.Release.ExpiresAt = &exp
	h := NewHandler(Fixed{accepted(t, m)}, Options{Now: func() time.Time { return exp }})
	rec := post(t, h, readFixture(t, "pod-allowed.json"))
	var resp admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Response.Allowed || !strings.Contains(resp.Response.Result.Message, "release store-web@42 expired at 2026-12-01T09:00:00Z") {
		t.Errorf("expired manifest: allowed=%v status=%+v, want a denial naming the expiry", resp.Response.Allowed, resp.Response.Result)
	}
}

// TestManifestFixture keeps testdata/manifest.json, the manifest the
// fixtures are judged against (bench/webhook.sh serves it), equal to
// testManifest(42).
func TestManifestFixture(t *testing.T) {
	path := filepath.Join("testdata", "manifest.json")
	want, err := testManifest(42).Indent()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not testManifest(42); run with -update", path)
	}
}

// panicking is a Manifests that panics, to check that a panic is a denial.
type panicking struct{}

func (panicking) Manifest() *Accepted { panic("boom") }

func TestPanicIsDenial(t *testing.T) {
	var logs testenv.SyncBuffer
	h := NewHandler(panicking{}, Options{Logger: newTestLogger(&logs)})
	body := readFixture(t, "pod-allowed.json")
	rec := post(t, h, body)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200 with a denial", rec.Code)
	}
	checkResponse(t, body, rec.Body.Bytes(), false)
	if !strings.Contains(rec.Body.String(), "internal error") || !strings.Contains(logs.String(), "boom") {
		t.Errorf("response %s, log %s: want an internal error denial and the panic logged", rec.Body, logs.String())
	}
}
