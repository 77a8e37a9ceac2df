// Command roots times, in a process of its own, what Go's crypto/x509 does
// on a TLS client's first handshake when no roots are configured: load the
// system's roots. bench/roots.sh runs it in interleaved rounds.
//
//	roots system   x509.SystemCertPool: the first bundle file that exists
//	               (or SSL_CERT_FILE), then every file of the certificate
//	               directories (or SSL_CERT_DIR)
//	roots bundle   the same bundle file alone: x509.SystemCertPool with
//	               SSL_CERT_DIR set to a directory that does not exist
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

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: roots system|bundle|lockstep")
		os.Exit(2)
	}
	if os.Args[1] == "bundle" {
		// Go skips a certificate directory that does not exist.
		os.Setenv("SSL_CERT_DIR", "/nonexistent/lockstep-bench-roots")
	}
	t := time.Now()
	var pool *x509.CertPool
	var err error
	switch os.Args[1] {
	case "system", "bundle":
		pool, err = x509.SystemCertPool()
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
