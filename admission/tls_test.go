package admission_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/remote"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

// tlsRelease is a release whose CDN, and optionally the manifest URL and
// the probed page, are HTTPS servers presenting the given certificates,
// with a gate that trusts the CA.
type tlsRelease struct {
	cfg                  admission.Config
	cdn, manifest, probe string // hosts
}

// newTLSRelease serves the CDN with cdnCert; manifestCert and probeCert,
// when set, serve the manifest URL and the probed page over HTTPS (else
// the manifest is a file and the page plain HTTP on loopback).
func newTLSRelease(t *testing.T, ca *tlstest.CA, cdnCert tls.Certificate, manifestCert, probeCert *tls.Certificate) *tlsRelease {
	t.Helper()
	const body = "console.log('tls')"
	r := &tlsRelease{}
	cdn := tlstest.Server(t, cdnCert, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) }))
	r.cdn = strings.TrimPrefix(cdn.URL, "https://")
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<script src="` + cdn.URL + `/static/a.js"></script>`))
	})
	var app *httptest.Server
	if probeCert != nil {
		app = tlstest.Server(t, *probeCert, page)
		r.probe = strings.TrimPrefix(app.URL, "https://")
	} else {
		app = httptest.NewServer(page)
		t.Cleanup(app.Close)
	}
	m := &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "store-web", Generation: 1, CreatedAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second)},
		Images:  []manifest.Image{webImage()},
		Assets: manifest.Assets{CDN: []string{cdn.URL + "/static/"},
			Files: []manifest.File{{Path: "a.js", Size: int64(len(body)), SHA256: manifest.SHA256([]byte(body)).Hex}}}}
	m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
	raw, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	client := transport.New(transport.Policy{MaxAttempts: 1, Timeout: 2 * time.Second}, transport.WithTLSConfig(&tls.Config{RootCAs: ca.Pool}))
	var src manifest.Source
	if manifestCert != nil {
		srv := tlstest.Server(t, *manifestCert, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.URL.Path != "/manifest.json" {
				http.NotFound(w, req)
				return
			}
			w.Write(raw)
		}))
		r.manifest = strings.TrimPrefix(srv.URL, "https://")
		if src, err = remote.New(srv.URL+"/manifest.json", client); err != nil {
			t.Fatal(err)
		}
	} else {
		path := filepath.Join(t.TempDir(), "manifest.json")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		src = manifest.FileSource{Path: path}
	}
	r.cfg = admission.Config{
		CDN:    cdngate.Checker{},
		Source: src, AllowUnsigned: true, Image: "web",
		Running: running.Given{Value: amd64Conf.String()}, Platform: "linux/amd64", Probes: []string{app.URL + "/"},
		Client: client, Timeout: 10 * time.Second,
	}
	return r
}

// tlsFinding returns the finding of kind tls-* about host.
func tlsFinding(d admission.Decision, host string) *admission.Finding {
	for _, f := range d.Findings {
		if strings.HasPrefix(string(f.Kind), "tls-") && f.Subject == host {
			return &f
		}
	}
	return nil
}

// TestCheckTLS: every endpoint the gate touches over TLS counts: a
// certificate within --tls-warn of its expiry is a tls-expiring warning
// (admitted), an expired one a tls-expiring refusal and one that does not
// verify a tls-invalid refusal, both exit 1 (the gate checked, and the
// endpoint is wrong), reported once per endpoint rather than per asset.
func TestCheckTLS(t *testing.T) {
	ca, other := tlstest.NewCA(t), tlstest.NewCA(t)
	good := ca.ValidFor(t, "good", 90*24*time.Hour)
	soon := ca.ValidFor(t, "soon", 3*24*time.Hour)
	expired := ca.ValidFor(t, "expired", -time.Hour)
	untrusted := other.ValidFor(t, "untrusted", 90*24*time.Hour)
	type want struct {
		endpoint string // "cdn", "manifest" or "probe"
		kind     admission.Kind
		severity admission.Severity
	}
	for _, tc := range []struct {
		name            string
		cdn             tls.Certificate
		manifest, probe *tls.Certificate
		warning         time.Duration
		allowed         bool
		want            *want // nil: no TLS finding
	}{
		{name: "a CDN certificate valid for 90 days", cdn: good, allowed: true},
		{name: "a CDN certificate expiring in 3 days", cdn: soon, allowed: true, want: &want{"cdn", admission.KindTLSExpiring, admission.Warn}},
		{name: "expiring in 3 days, --tls-warn 48h", cdn: soon, warning: 48 * time.Hour, allowed: true},
		{name: "an expired CDN certificate", cdn: expired, want: &want{"cdn", admission.KindTLSExpiring, admission.Refuse}},
		{name: "a CDN certificate of an unknown CA", cdn: untrusted, want: &want{"cdn", admission.KindTLSInvalid, admission.Refuse}},
		{name: "a manifest URL certificate expiring in 3 days", cdn: good, manifest: &soon, allowed: true, want: &want{"manifest", admission.KindTLSExpiring, admission.Warn}},
		{name: "an expired manifest URL certificate", cdn: good, manifest: &expired, want: &want{"manifest", admission.KindTLSExpiring, admission.Refuse}},
		{name: "a probed page's certificate expiring in 3 days", cdn: good, probe: &soon, allowed: true, want: &want{"probe", admission.KindTLSExpiring, admission.Warn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTLSRelease(t, ca, tc.cdn, tc.manifest, tc.probe)
			r.cfg.TLSWarning = tc.warning
			d := admission.Check(context.Background(), r.cfg)
			if d.Allowed != tc.allowed || (!d.Allowed && d.Unverified) {
				t.Errorf("Allowed %v, Unverified %v; want Allowed %v (a refusal being exit 1)\n%s", d.Allowed, d.Unverified, tc.allowed, dump(d))
			}
			var tlsKinds []admission.Kind
			for _, f := range d.Findings {
				if strings.HasPrefix(string(f.Kind), "tls-") {
					tlsKinds = append(tlsKinds, f.Kind)
				}
			}
			if tc.want == nil {
				if len(tlsKinds) != 0 {
					t.Errorf("TLS findings %v, want none\n%s", tlsKinds, dump(d))
				}
				return
			}
			host := map[string]string{"cdn": r.cdn, "manifest": r.manifest, "probe": r.probe}[tc.want.endpoint]
			f := tlsFinding(d, host)
			if f == nil || f.Kind != tc.want.kind || f.Severity != tc.want.severity || f.Got == "" || len(tlsKinds) != 1 {
				t.Errorf("TLS findings %v; want one %s %s about the %s (%s)\n%s", tlsKinds, tc.want.severity, tc.want.kind, tc.want.endpoint, host, dump(d))
			}
			if tc.want.endpoint == "cdn" && tc.want.severity == admission.Refuse && slices.Contains(kinds(d, admission.Refuse), admission.KindDependencyUnreachable) {
				t.Errorf("a CDN TLS failure also reported as dependency-unreachable\n%s", dump(d))
			}
		})
	}
}
