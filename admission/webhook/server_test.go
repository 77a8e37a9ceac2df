package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestServeTLS runs the webhook over real TLS on loopback, with a CA and a
// serving certificate made in the test and a client that trusts only that
// CA: fail closed before a manifest, decisions after, a manifest change on
// disk taking effect after a refresh, and certificate reloads seen by the
// client (the serial it is served).
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t)
	certFile, keyFile := issue(t, ca, dir, 2)
	path := filepath.Join(dir, "manifest.json")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "https://" + ln.Addr().String()
	var logs testenv.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, Config{
			Listener: ln, CertFile: certFile, KeyFile: keyFile, CertCheckInterval: -1,
			Source: manifest.FileSource{Path: path}, AllowUnsigned: true, Refresh: 20 * time.Millisecond,
			Logger: newTestLogger(&logs),
		})
	}()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve returned %v after the context was cancelled, want nil", err)
		}
	}()

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12},
		DisableKeepAlives: true, // a new handshake per request, to see a reloaded certificate
		ForceAttemptHTTP2: true, // as the API server's client does
	}}
	get := func(p string) (int, string, *tls.ConnectionState) {
		t.Helper()
		resp, err := client.Get(base + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.TLS
	}
	review := func(fixture string) (*admissionv1.AdmissionResponse, *tls.ConnectionState) {
		t.Helper()
		resp, err := client.Post(base+"/validate?timeout=5s", "application/json", bytes.NewReader(readFixture(t, fixture)))
		if err != nil {
			t.Fatalf("POST %s: %v", fixture, err)
		}
		defer resp.Body.Close()
		var r admissionv1.AdmissionReview
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&r) != nil || r.Response == nil {
			t.Fatalf("POST %s: status %d, no AdmissionReview", fixture, resp.StatusCode)
		}
		return r.Response, resp.TLS
	}
	serial := func(cs *tls.ConnectionState) string { return cs.PeerCertificates[0].SerialNumber.String() }

	// Before any manifest: not ready, every review denied.
	if code, body, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before a manifest: %d %q, want 503", code, body)
	}
	if code, _, cs := get("/healthz"); code != http.StatusOK || cs.NegotiatedProtocol != "h2" {
		t.Errorf("/healthz: %d over %q, want 200 over h2", code, cs.NegotiatedProtocol)
	}
	if r, cs := review("pod-allowed.json"); r.Allowed || !strings.Contains(r.Result.Message, "no verified release manifest") {
		t.Errorf("before a manifest: allowed=%v %+v, want a denial", r.Allowed, r.Result)
	} else if serial(cs) != "2" {
		t.Errorf("served certificate serial %s, want 2", serial(cs))
	}

	writeManifest(t, path, testManifest(42), nil)
	waitUntil(t, "ready", func() bool { code, _, _ := get("/readyz"); return code == http.StatusOK })
	if _, body, _ := get("/readyz"); !strings.Contains(body, "store-web@42") {
		t.Errorf("/readyz = %q, want it to name the release", body)
	}
	if r, _ := review("pod-allowed.json"); !r.Allowed {
		t.Errorf("pod-allowed: denied: %+v", r.Result)
	}
	if r, _ := review("pod-moved-tag.json"); r.Allowed {
		t.Errorf("pod-moved-tag: allowed under generation 42")
	}

	// A new generation on disk, where the tag v1.4.2 legitimately moved to
	// sha256:bbbb…, takes effect without a restart.
	next := testManifest(43)
	next.Images[0].Digest = digest("b")
	writeManifest(t, path, next, nil)
	waitUntil(t, "generation 43", func() bool { r, _ := review("pod-moved-tag.json"); return r.Allowed })
	// An older generation written over it is refused; 43 stays.
	writeManifest(t, path, testManifest(41), nil)
	waitUntil(t, "the rollback refused", func() bool { return strings.Contains(logs.String(), "generation 41 is not newer than generation 43") })
	if r, _ := review("pod-moved-tag.json"); !r.Allowed || r.AuditAnnotations["release"] != "store-web@43" {
		t.Errorf("after a rollback attempt: allowed=%v release=%q, want generation 43 kept", r.Allowed, r.AuditAnnotations["release"])
	}

	// A new certificate is served from the next handshake on.
	issue(t, ca, dir, 3)
	if _, cs := review("pod-allowed.json"); serial(cs) != "3" {
		t.Errorf("after a reload, serial %s, want 3", serial(cs))
	}
	// A pair that does not load keeps the old one serving.
	if err := os.WriteFile(certFile, []byte("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, cs := get("/healthz"); serial(cs) != "3" {
		t.Errorf("after a bad certificate, serial %s, want 3 kept", serial(cs))
	}
	issue(t, ca, dir, 4)
	if _, _, cs := get("/healthz"); serial(cs) != "4" {
		t.Errorf("after a good certificate again, serial %s, want 4", serial(cs))
	}

	_, metrics, _ := get("/metrics")
	for _, want := range []string{
		`lockstep_webhook_requests_total{decision="allowed"}`,
		`lockstep_webhook_requests_total{decision="error"} 1`,
		`lockstep_webhook_request_duration_seconds_bucket`,
		`lockstep_webhook_manifest_generation{release="store-web"} 43`,
		`lockstep_webhook_manifest_unsigned{release="store-web"} 1`,
		`lockstep_webhook_tls_reloads_total{result="ok"} 2`,
		`lockstep_webhook_tls_reloads_total{result="error"} 1`,
		`lockstep_webhook_tls_not_after_timestamp_seconds`,
		`go_goroutines`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(metrics, `lockstep_webhook_requests_total{decision="denied"} 0`) {
		t.Errorf("/metrics counts no denial:\n%s", grep(metrics, "requests_total"))
	}
	if !strings.Contains(logs.String(), "TLS certificate reload failed, keeping the old pair") {
		t.Errorf("the failed reload is not logged")
	}
}

// TestServeConfigErrors checks what Serve refuses before serving.
func TestServeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := issue(t, tlstest.NewCA(t), dir, 2)
	src := manifest.FileSource{Path: filepath.Join(dir, "manifest.json")}
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"bad mode", Config{Mode: "audit", Source: src, AllowUnsigned: true, CertFile: certFile, KeyFile: keyFile}, `mode "audit"`},
		{"bad unmanaged", Config{Unmanaged: "ignore", Source: src, AllowUnsigned: true, CertFile: certFile, KeyFile: keyFile}, `unmanaged "ignore"`},
		{"no verifier", Config{Source: src, CertFile: certFile, KeyFile: keyFile}, "no manifest verifier"},
		{"no certificate", Config{Source: src, AllowUnsigned: true, CertFile: filepath.Join(dir, "missing.crt"), KeyFile: keyFile}, "no such file"},
		{"key of another certificate", Config{Source: src, AllowUnsigned: true, CertFile: certFile, KeyFile: certFile}, "loading TLS pair"},
		{"bad address", Config{Listen: "127.0.0.1:http-alt-x", Source: src, AllowUnsigned: true, CertFile: certFile, KeyFile: keyFile}, "listening on"},
	}
	for _, tt := range tests {
		err := Serve(context.Background(), tt.c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Serve = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

// waitUntil polls cond (a bounded wait for a background refresh, not a
// timing assertion).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
