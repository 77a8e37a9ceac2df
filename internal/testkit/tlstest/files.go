package tlstest

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a test CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files in a temporary directory: what a server
// configured with --tls-cert/--tls-key/--client-ca and its client read.
type PKI struct {
	CAFile                string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	Client                tls.Certificate
	Roots                 *x509.CertPool
}

// NewPKI creates a PKI whose certificates are valid for an hour.
func NewPKI(t testing.TB) PKI {
	t.Helper()
	dir := t.TempDir()
	ca := NewCA(t)
	p := PKI{CAFile: filepath.Join(dir, "ca.pem"), Roots: ca.Pool}
	WriteCert(t, p.CAFile, ca.Cert)
	p.ServerCert, p.ServerKey = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	WritePair(t, p.ServerCert, p.ServerKey, ca.ValidFor(t, "server", time.Hour))
	p.ClientCert, p.ClientKey = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	p.Client = ca.ClientCert(t, "client")
	WritePair(t, p.ClientCert, p.ClientKey, p.Client)
	return p
}

// WriteCert writes cert as PEM to path.
func WriteCert(t testing.TB, path string, cert *x509.Certificate) {
	t.Helper()
	writePEM(t, path, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// WritePair writes pair's leaf certificate and its ECDSA key (PKCS #8) as
// PEM to certFile and keyFile, each through a temporary name and a rename,
// as a Kubernetes Secret volume is updated.
func WritePair(t testing.TB, certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("WritePair: a %T key, want *ecdsa.PrivateKey", pair.PrivateKey)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certFile, &pem.Block{Type: "CERTIFICATE", Bytes: pair.Certificate[0]})
	writePEM(t, keyFile, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func writePEM(t testing.TB, path string, b *pem.Block) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(b), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
