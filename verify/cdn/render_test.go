package cdn

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenReport is a fixed report with one of everything.
func goldenReport() *Report {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r := &Report{
		Bases:  []string{"https://cdn.example/assets/"},
		Files:  7,
		Origin: &OriginCheck{URL: "https://origin.example", Addresses: []string{"192.0.2.10:443"}},
		Results: []Result{
			{Path: "app.js", URL: "https://cdn.example/assets/app.js", Status: StatusOK, HTTPStatus: 200, Method: "HEAD", Size: 1234, Verified: []string{"x-amz-checksum-sha256"}, Compared: ComparedChecksum},
			{Path: "robots.txt", URL: "https://cdn.example/assets/robots.txt", Status: StatusOK, HTTPStatus: 200, Method: "HEAD", Size: 24, Compared: ComparedSize},
			{Path: "gone|odd*name.js", URL: "https://cdn.example/assets/gone%7Codd%2Aname.js", Status: StatusMissing, HTTPStatus: 403, Method: "HEAD", Reason: "403 Forbidden"},
			{Path: "img/logo.png", URL: "https://cdn.example/assets/img/logo.png", Status: StatusWrongSize, HTTPStatus: 200, Method: "HEAD", Reason: "10 bytes, want 2048"},
			{Path: "style.css", URL: "https://cdn.example/assets/style.css", Status: StatusWrongContent, HTTPStatus: 200, Method: "HEAD", Reason: "etag says sha256:aaaa, want sha256:bbbb"},
			{Path: "vendor.js", URL: "https://cdn.example/assets/vendor.js", Status: StatusUnreachable, Method: "HEAD", Reason: "timed out: context deadline exceeded"},
			{Path: "loop.js", URL: "https://cdn.example/assets/loop.js", Status: StatusLoop, HTTPStatus: 0, Method: "HEAD", Reason: "loop at https://cdn.example/assets/loop.js: CDN-Loop names cloudfront more than once"},
		},
	}
	for _, c := range []transport.Certificate{
		{Host: "cdn.example", Subject: "CN=cdn.example", Issuer: "CN=Test CA", NotAfter: now.Add(5 * 24 * time.Hour)},
		{Host: "old.example", Subject: "CN=old.example", Issuer: "CN=Test CA", NotAfter: now.Add(-36 * time.Hour), Error: "x509: certificate has expired or is not yet valid"},
	} {
		r.TLS = append(r.TLS, endpointOf(c, now, DefaultTLSWarn))
	}
	r.summarize(9, 3, 1234*time.Millisecond)
	return r
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct{ format, file string }{
		{"text", "report.txt"},
		{"json", "report.json"},
		{"markdown", "report.md"},
		{"sarif", "report.sarif"},
	} {
		var b bytes.Buffer
		if err := goldenReport().Write(&b, tc.format, "v1.2.3"); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s output differs from %s (go test -update to accept):\n%s", tc.format, path, b.String())
		}
		if tc.format == "json" || tc.format == "sarif" {
			var v any
			if err := json.Unmarshal(b.Bytes(), &v); err != nil {
				t.Errorf("%s is not JSON: %v", tc.format, err)
			}
		}
	}
	if err := goldenReport().Write(&bytes.Buffer{}, "xml", ""); err == nil {
		t.Error("Write(xml): no error")
	}
}
