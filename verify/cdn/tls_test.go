package cdn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verify"
)

// testCA signs leaf certificates for 127.0.0.1.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lockstep test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert, key, pool}
}

// leaf returns a certificate for 127.0.0.1 valid from notBefore to notAfter.
func (ca *testCA) leaf(t *testing.T, cn string, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func tlsCDN(t *testing.T, cert tls.Certificate) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestTLS(t *testing.T) {
	ca := newCA(t)
	now := time.Now()
	good := tlsCDN(t, ca.leaf(t, "good", now.Add(-time.Hour), now.Add(90*24*time.Hour)))
	soon := tlsCDN(t, ca.leaf(t, "soon", now.Add(-time.Hour), now.Add(3*24*time.Hour)))
	expired := tlsCDN(t, ca.leaf(t, "expired", now.Add(-48*time.Hour), now.Add(-time.Hour)))
	other := newCA(t)
	untrusted := tlsCDN(t, other.leaf(t, "untrusted", now.Add(-time.Hour), now.Add(90*24*time.Hour)))
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
		c := transport.New(transport.DefaultPolicy(), transport.WithTLSConfig(&tls.Config{RootCAs: ca.pool}))
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
		if got := verify.IsMismatch(rep.Err()); got != (tc.err == "mismatch") {
			t.Errorf("%s: Err() = %v, want a mismatch: %v", tc.srv.URL, rep.Err(), tc.err == "mismatch")
		}
		if tc.endpoint == TLSExpiring && rep.Summary.TLSExpiring != 1 {
			t.Errorf("%s: summary counts %d expiring, want 1", tc.srv.URL, rep.Summary.TLSExpiring)
		}
	}
}
