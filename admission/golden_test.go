package admission_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestDecisionJSON pins the JSON shape of a decision: docs/boot-gate.md documents
// it and the fleet check reads it.
func TestDecisionJSON(t *testing.T) {
	d := admission.Decision{At: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC), Platform: "linux/amd64", Image: "web"}
	d.Release, d.Generation = "store-web", 7
	d.ManifestDigest = dg("a")
	d.ManifestLocation = "https://releases.example.com/store-web/production.json"
	d.Running = &running.Observation{Source: "docker:web", Container: "web", Reference: "registry.example.com/store/web:v1",
		ImageID: stranger, RepoDigests: []manifest.Digest{dg("8")}, Platform: "linux/amd64"}
	d.RunningDigest = stranger
	d.Served = []string{"js/app.1111.js", "js/app.9999.js"}
	d.ServedFingerprint = dg("f")
	d.CDNChecked = 2
	d.Closure = &admission.Closure{Graph: true, Referenced: 1, Assets: 4, Checked: 4, Max: admission.DefaultMaxClosure}
	d.InstanceChecked = 1
	d.Add(admission.Finding{Kind: admission.KindImageDigestMismatch, Subject: "image web", Got: stranger.String(), Want: index.String(), Message: "docker:web runs " + stranger.String()})
	d.Add(admission.Finding{Kind: admission.KindAssetNotInManifest, Subject: "js/app.9999.js", Message: "not in the manifest"})
	d.Add(admission.Finding{Kind: admission.KindAssetMissingOnCDN, Subject: "js/app.9999.js", Got: "404 Not Found", Want: "200", Message: "missing on the CDN"})
	d.Actions = []admission.Action{{Kind: "complete-lifecycle-action", Target: "store-web/lockstep-boot-gate", Instance: "i-0123456789abcdef0", Result: "ABANDON", Status: admission.ActionDone, Heartbeats: 1}}
	d.Requests, d.Duration = 54, 28*time.Millisecond
	got, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "decision.golden.json")
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("decision JSON changed; if on purpose, run go test -update and say so in docs/boot-gate.md:\n%s", got)
	}
	var back admission.Decision
	if err := json.Unmarshal(got, &back); err != nil || back.Allowed || back.Unverified || len(back.Findings) != 3 {
		t.Errorf("the decision does not round-trip: %v %+v", err, back)
	}
}

// TestCheckTLSExpiring reports a CDN certificate close to its expiry as a
// warning, not a refusal.
func TestCheckTLSExpiring(t *testing.T) {
	body := "console.log('tls')"
	cdn := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
	defer cdn.Close()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<script src="` + cdn.URL + `/a.js"></script>`))
	}))
	defer app.Close()
	m := &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "store-web", Generation: 1, CreatedAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second)},
		Images:  []manifest.Image{webImage()},
		Assets: manifest.Assets{CDN: []string{cdn.URL + "/"},
			Files: []manifest.File{{Path: "a.js", Size: int64(len(body)), SHA256: manifest.SHA256([]byte(body)).Hex}}}}
	m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
	raw, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(path, raw, 0o644)
	roots := x509.NewCertPool()
	roots.AddCert(cdn.Certificate())
	for _, tt := range []struct {
		warning time.Duration
		want    bool
	}{{0, false}, {100 * 365 * 24 * time.Hour, true}} {
		d := admission.Check(context.Background(), admission.Config{
			CDN:    cdngate.Checker{},
			Source: manifest.FileSource{Path: path}, AllowUnsigned: true, Image: "web",
			Running: running.Given{Value: amd64Conf.String()}, Platform: "linux/amd64", Probes: []string{app.URL},
			Client:     transport.New(transport.Policy{MaxAttempts: 1}, transport.WithTLSConfig(&tls.Config{RootCAs: roots})),
			TLSWarning: tt.warning,
		})
		if !d.Allowed || d.Has(admission.KindTLSExpiring) != tt.want {
			t.Errorf("TLSWarning %s: Allowed %v, tls-expiring %v, want %v\n%s", tt.warning, d.Allowed, d.Has(admission.KindTLSExpiring), tt.want, dump(d))
		}
	}
}
