package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHandler measures the handler alone (decode, judge, encode) on
// the fixtures, without TLS or the network: bench/webhook.sh measures
// those.
func BenchmarkHandler(b *testing.B) {
	h := NewHandler(Fixed{accepted(b, testManifest(42))}, Options{Metrics: NewMetrics()})
	for _, fixture := range []string{"pod-allowed.json", "pod-moved-tag.json", "deployment.json", "pod-ephemeral.json"} {
		body := readFixture(b, fixture)
		b.Run(fixture, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
