package app_test

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// TestAdmitTLS: the CDN's certificate, expiring within --tls-warn, is a
// tls-expiring warning (exit 0); expired, a refusal (exit 1).
func TestAdmitTLS(t *testing.T) {
	ca := tlstest.NewCA(t)
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", bundle) // the gate's client trusts it, as the AWS SDK would
	for _, tc := range []struct {
		name    string
		valid   time.Duration
		args    []string
		code    int
		finding admission.Severity // "": none
	}{
		{"expiring in 3 days", 72 * time.Hour, nil, 0, admission.Warn},
		{"expiring in 3 days, --tls-warn 48h", 72 * time.Hour, []string{"--tls-warn", "48h"}, 0, ""},
		{"expired", -time.Hour, nil, 1, admission.Refuse},
	} {
		cert := ca.ValidFor(t, "cdn", tc.valid)
		e := newAdmitEnvCDN(t, func(h http.Handler) *httptest.Server { return tlstest.Server(t, cert, h) })
		code, out, errOut := run(t, e.args(append(tc.args, "--format", "json")...)...)
		var d admission.Decision
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", tc.name, err, out, errOut)
		}
		var got admission.Severity
		for _, f := range d.Findings {
			if f.Kind == admission.KindTLSExpiring && f.Subject == strings.TrimPrefix(e.cdn, "https://") {
				got = f.Severity
			}
		}
		if code != tc.code || got != tc.finding {
			t.Errorf("%s: exit %d, tls-expiring %q; want exit %d, %q\n%s%s", tc.name, code, got, tc.code, tc.finding, out, errOut)
		}
	}
	if code, _, errOut := run(t, "admit", "--manifest", "m.json", "--release", "store-web", "--insecure-allow-unsigned", "--running", "digest:sha256:"+strings.Repeat("1", 64), "--tls-warn", "0s"); code != 2 {
		t.Errorf("--tls-warn 0s: exit %d, want 2\n%s", code, errOut)
	}
}
