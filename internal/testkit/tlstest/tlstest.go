// Package tlstest is the tests' one PKI: a certificate authority that
// issues 127.0.0.1 server certificates with any validity window (expiring,
// expired, not yet valid), client certificates, intermediates and
// certificates from any template (sigtest builds its Fulcio-style CA on
// it); the PEM files a server or a client is configured with; and loopback
// HTTPS servers that present them.
package tlstest

import (
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
	"sync/atomic"
	"testing"
	"time"
)

var serial atomic.Int64

// CA is a test certificate authority. Pool trusts it (for an intermediate:
// trusts its root).
type CA struct {
	Cert *x509.Certificate
	Pool *x509.CertPool
	key  *ecdsa.PrivateKey
}

// NewCA returns a CA valid from an hour ago for a year.
func NewCA(t testing.TB) *CA {
	t.Helper()
	return NewCAFrom(t, &x509.Certificate{
		Subject:   pkix.Name{CommonName: "lockstep test CA"},
		NotBefore: time.Now().Add(-time.Hour),
		NotAfter:  time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:  x509.KeyUsageCertSign,
	})
}

// NewCAFrom returns a self-signed CA made from tmpl; IsCA and
// BasicConstraintsValid are set, and a serial number when tmpl has none.
func NewCAFrom(t testing.TB, tmpl *x509.Certificate) *CA {
	t.Helper()
	key := NewKey(t)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	setSerial(tmpl)
	cert := create(t, tmpl, tmpl, key, key)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Cert: cert, Pool: pool, key: key}
}

// NewIntermediate returns a CA made from tmpl and signed by ca; IsCA and
// BasicConstraintsValid are set, and a serial number when tmpl has none.
func (ca *CA) NewIntermediate(t testing.TB, tmpl *x509.Certificate) *CA {
	t.Helper()
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	cert, key := ca.Issue(t, tmpl)
	return &CA{Cert: cert, Pool: ca.Pool, key: key}
}

// Issue signs a certificate made from tmpl (given a serial number when it
// has none) for a new ECDSA P-256 key, and returns both.
func (ca *CA) Issue(t testing.TB, tmpl *x509.Certificate) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key := NewKey(t)
	setSerial(tmpl)
	return create(t, tmpl, ca.Cert, key, ca.key), key
}

// Leaf returns a server certificate for 127.0.0.1 named cn, valid from
// notBefore to notAfter.
func (ca *CA) Leaf(t testing.TB, cn string, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	cert, key := ca.Issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	})
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key}
}

// ValidFor is Leaf valid from an hour ago for d (negative: expired d ago).
func (ca *CA) ValidFor(t testing.TB, cn string, d time.Duration) tls.Certificate {
	t.Helper()
	now := time.Now()
	if d < 0 {
		return ca.Leaf(t, cn, now.Add(d-time.Hour), now.Add(d))
	}
	return ca.Leaf(t, cn, now.Add(-time.Hour), now.Add(d))
}

// ClientCert returns a client certificate named cn, valid from an hour
// ago for an hour.
func (ca *CA) ClientCert(t testing.TB, cn string) tls.Certificate {
	t.Helper()
	cert, key := ca.Issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   time.Now().Add(-time.Hour),
		NotAfter:    time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key}
}

// Server starts an HTTPS server on loopback presenting cert, closed when
// the test ends. Handshake failures are not logged.
func Server(t testing.TB, cert tls.Certificate, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// NewKey returns a new ECDSA P-256 key.
func NewKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func setSerial(tmpl *x509.Certificate) {
	if tmpl.SerialNumber == nil {
		tmpl.SerialNumber = big.NewInt(serial.Add(1))
	}
}

func create(t testing.TB, tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, signer *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
