package cdn

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verdict"
)

func tlsCDN(t *testing.T, cert tls.Certificate) *httptest.Server {
	t.Helper()
	return tlstest.Server(t, cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
}

func TestTLS(t *testing.T) {
	ca := tlstest.NewCA(t)
	now := time.Now()
	good := tlsCDN(t, ca.Leaf(t, "good", now.Add(-time.Hour), now.Add(90*24*time.Hour)))
	soon := tlsCDN(t, ca.Leaf(t, "soon", now.Add(-time.Hour), now.Add(3*24*time.Hour)))
	expired := tlsCDN(t, ca.Leaf(t, "expired", now.Add(-48*time.Hour), now.Add(-time.Hour)))
	other := tlstest.NewCA(t)
	untrusted := tlsCDN(t, other.Leaf(t, "untrusted", now.Add(-time.Hour), now.Add(90*24*time.Hour)))
	host := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "https://") }

	for _, tc := range []struct {
		srv      *httptest.Server
		warn     time.Duration
		asset    Status
		endpoint string
		err      string // "", "mismatch"
	}{
		{good, 0, StatusOK, TLSOK, ""},
		{soon, 0, StatusOK, TLSExpiring, ""},
		{soon, 48 * time.Hour, StatusOK, TLSOK, ""},
		{expired, 0, StatusTLS, TLSExpired, "mismatch"},
		{untrusted, 0, StatusTLS, TLSInvalid, "mismatch"},
	} {
		c := transport.New(transport.DefaultPolicy(), transport.WithTLSConfig(&tls.Config{RootCAs: ca.Pool}))
		a := assets(map[string]string{"app.js": body}, tc.srv.URL)
		rep, err := Check(context.Background(), a, Options{Client: c, TLSWarn: tc.warn})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.TLS) != 1 {
			t.Fatalf("%s: TLS endpoints %+v, want one", tc.srv.URL, rep.TLS)
		}
		e := rep.TLS[0]
		if rep.Results[0].Status != tc.asset || e.Status != tc.endpoint || e.Host != host(tc.srv) || e.NotAfter.IsZero() {
			t.Errorf("%s (warn %v): asset %s (%s), endpoint %+v; want asset %s, endpoint %s",
				tc.srv.URL, tc.warn, rep.Results[0].Status, rep.Results[0].Reason, e, tc.asset, tc.endpoint)
		}
		if tc.asset == StatusTLS && c.Stats().Retries != 0 {
			t.Errorf("%s: a TLS failure was retried %d times", tc.srv.URL, c.Stats().Retries)
		}
		if got := verdict.IsMismatch(rep.Err()); got != (tc.err == "mismatch") {
			t.Errorf("%s: Err() = %v, want a mismatch: %v", tc.srv.URL, rep.Err(), tc.err == "mismatch")
		}
		if tc.endpoint == TLSExpiring && rep.Summary.TLSExpiring != 1 {
			t.Errorf("%s: summary counts %d expiring, want 1", tc.srv.URL, rep.Summary.TLSExpiring)
		}
	}
}
