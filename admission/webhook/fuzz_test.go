package webhook

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// FuzzHandler feeds the handler arbitrary bodies, seeded with the
// fixtures: it must never panic, answer only with the documented codes,
// and answer every 200 with the request's uid and, when it did not judge
// it allowed, a denial message.
func FuzzHandler(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "requests", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	h := NewHandler(Fixed{accepted(f, testManifest(42))}, Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := post(t, h, body)
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			return
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
		var resp admissionv1.AdmissionReview
		req, err := decodeReview(body)
		if err != nil {
			t.Fatalf("answered 200 to a body that does not decode: %v", err)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Response == nil {
			t.Fatalf("200 without an AdmissionReview: %s", rec.Body)
		}
		if resp.Response.UID != req.Request.UID {
			t.Fatalf("uid %q, want %q", resp.Response.UID, req.Request.UID)
		}
		if !resp.Response.Allowed && (resp.Response.Result == nil || resp.Response.Result.Message == "") {
			t.Fatalf("a denial without a message: %s", rec.Body)
		}
	})
}
