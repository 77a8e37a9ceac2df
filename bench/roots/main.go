// Command roots times, in a process of its own, what Go's crypto/x509 does
// on a TLS client's first handshake when no roots are configured: load the
// system's roots. bench/roots.sh runs it in interleaved rounds.
//
//	roots system   x509.SystemCertPool: the first bundle file that exists
//	               (or SSL_CERT_FILE), then every file of the certificate
//	               directories (or SSL_CERT_DIR)
//	roots bundle   the same bundle file alone, parsed into a pool
//	roots lockstep transport.SystemRoots: the same files as system, each
//	               certificate parsed once
//
// It prints the milliseconds taken and the number of certificates.
package main

import (
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// bundles is crypto/x509's list for Linux (root_linux.go), in its order.
var bundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: roots system|bundle|lockstep")
		os.Exit(2)
	}
	t := time.Now()
	var pool *x509.CertPool
	var err error
	switch os.Args[1] {
	case "system":
		pool, err = x509.SystemCertPool()
	case "bundle":
		pool, err = bundle()
	case "lockstep":
		if pool = transport.SystemRoots(); pool == nil {
			err = fmt.Errorf("no roots read")
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: roots system|bundle|lockstep")
		os.Exit(2)
	}
	d := time.Since(t)
	if err != nil {
		fmt.Fprintln(os.Stderr, "roots:", err)
		os.Exit(3)
	}
	//lint:ignore SA1019 Subjects is only counted: the pool's size
	fmt.Printf("%.3f %d\n", float64(d.Microseconds())/1000, len(pool.Subjects()))
}

func bundle() (*x509.CertPool, error) {
	files := bundles
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		files = []string{f}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		p := x509.NewCertPool()
		p.AppendCertsFromPEM(b)
		return p, nil
	}
	return nil, fmt.Errorf("no bundle file among %v", files)
}
