package transport

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"sync"
)

// SystemRoots returns the roots Go's crypto/x509 trusts when none are
// configured (x509.SystemCertPool), loaded faster where Go reads them from
// files (Linux), or nil where this package leaves them to Go (the platform
// verifiers of macOS and Windows, or no root found: Go's own then decides,
// with its errors and fallbacks). The pool is the caller's to add to.
//
// It holds the same certificates as Go's pool, read from the same files in
// the same order: the first bundle file that exists (SSL_CERT_FILE
// instead, when set), then every file of the certificate directories
// (SSL_CERT_DIR's, when set) but symlinks within a directory. What differs
// is the work: Go parses every certificate of every file and then drops
// the duplicates, and on a Debian system /etc/ssl/certs holds the bundle
// again (ca-certificates.crt) and each of its certificates in a file of
// its own, so Go parses each root three times. Here a file whose bytes
// were already read is skipped, and a certificate is parsed only the first
// time its DER is seen.
func SystemRoots() *x509.CertPool {
	p := systemRoots()
	if p == nil {
		return nil
	}
	return p.Clone()
}

// systemRoots is the process's pool, loaded once and then only read: the
// roots of every Client left to the system's.
var systemRoots = sync.OnceValue(func() *x509.CertPool {
	if !readsRootFiles {
		return nil
	}
	return loadRoots(rootFiles())
})

// rootSet adds certificates to a pool, each parsed once.
type rootSet struct {
	pool  *x509.CertPool
	files map[[sha256.Size]byte]bool
	certs map[[sha256.Size224]byte]bool
	n     int
}

func newRootSet() *rootSet {
	return &rootSet{pool: x509.NewCertPool(), files: map[[sha256.Size]byte]bool{}, certs: map[[sha256.Size224]byte]bool{}}
}

// add adds the certificates of a PEM file as x509.CertPool's
// AppendCertsFromPEM does: blocks of type CERTIFICATE without headers
// that parse; the rest is skipped.
func (s *rootSet) add(data []byte) {
	sum := sha256.Sum256(data)
	if s.files[sum] {
		return
	}
	s.files[sum] = true
	for len(data) > 0 {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			continue
		}
		// The pool's own key: a certificate that parses has Raw equal to
		// the block's bytes (trailing data fails the parse).
		key := sha256.Sum224(block.Bytes)
		if s.certs[key] {
			continue
		}
		s.certs[key] = true
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			continue
		}
		s.pool.AddCert(cert)
		s.n++
	}
}

// loadRoots parses files into one pool; nil when none holds a
// certificate, for Go to decide (its error, or its fallback roots).
func loadRoots(files [][]byte) *x509.CertPool {
	s := newRootSet()
	for _, f := range files {
		s.add(f)
	}
	if s.n == 0 {
		return nil
	}
	return s.pool
}
