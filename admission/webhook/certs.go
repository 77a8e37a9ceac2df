package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CertOptions configure a CertReloader.
type CertOptions struct {
	// CheckInterval is how often, at most, a handshake checks whether the
	// files changed (default 5s). Negative checks on every handshake.
	CheckInterval time.Duration
	Logger        *slog.Logger
	Metrics       *Metrics
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// CertReloader serves a TLS certificate and key from files, re-reading
// them when either file's size, modification time or identity changes (a
// Kubernetes Secret volume swaps a symlink; cert-manager rewrites it). A
// pair that does not load keeps the old one serving.
type CertReloader struct {
	certFile, keyFile string
	o                 CertOptions

	cert atomic.Pointer[tls.Certificate]

	mu        sync.Mutex // guards the fields below
	checked   time.Time
	certStat  os.FileInfo
	keyStat   os.FileInfo
	lastError string
}

// NewCertReloader loads the pair once; an error here (a missing file, a
// key that does not match) is returned.
func NewCertReloader(certFile, keyFile string, o CertOptions) (*CertReloader, error) {
	if o.CheckInterval == 0 {
		o.CheckInterval = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &CertReloader{certFile: certFile, keyFile: keyFile, o: o}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.load(); err != nil {
		return nil, err
	}
	r.checked = o.Now()
	return r, nil
}

// Certificate returns the pair being served.
func (r *CertReloader) Certificate() *tls.Certificate { return r.cert.Load() }

// GetCertificate is a tls.Config.GetCertificate: it returns the current
// pair, first reloading it if CheckInterval has passed and the files
// changed.
func (r *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	if r.o.CheckInterval < 0 || r.o.Now().Sub(r.checked) >= r.o.CheckInterval {
		_, _ = r.reload() // logged and counted; the old pair keeps serving
	}
	r.mu.Unlock()
	return r.cert.Load(), nil
}

// Reload re-reads the pair if the files changed since it was last read.
// It reports whether a new pair is now served; on an error the old pair
// stays and the error is logged, counted, and returned.
func (r *CertReloader) Reload() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reload()
}

func (r *CertReloader) reload() (bool, error) {
	r.checked = r.o.Now()
	cs, err1 := os.Stat(r.certFile)
	ks, err2 := os.Stat(r.keyFile)
	if err1 == nil && err2 == nil && same(cs, r.certStat) && same(ks, r.keyStat) {
		return false, nil
	}
	leaf, err := r.load()
	if err != nil {
		// Log a failure once per change, not on every handshake.
		if err.Error() != r.lastError {
			r.lastError = err.Error()
			r.o.Metrics.certReload(false)
			r.o.Logger.Error("TLS certificate reload failed, keeping the old pair", "err", err)
		}
		return false, err
	}
	r.lastError = ""
	r.o.Metrics.certReload(true)
	r.o.Logger.Info("TLS certificate reloaded", "subject", leaf.Subject.String(), "serial", leaf.SerialNumber.String(),
		"notAfter", leaf.NotAfter.Format(time.RFC3339))
	return true, nil
}

// load reads and parses the pair and makes it current. The caller holds mu.
func (r *CertReloader) load() (*x509.Certificate, error) {
	// Stat before reading: a change between the two is seen next time.
	cs, err := os.Stat(r.certFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	ks, err := os.Stat(r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS key: %w", err)
	}
	pair, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading TLS pair %s, %s: %w", r.certFile, r.keyFile, err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parsing TLS certificate %s: %w", r.certFile, err)
		}
		pair.Leaf = leaf
	}
	r.cert.Store(&pair)
	r.certStat, r.keyStat = cs, ks
	r.o.Metrics.certLoaded(leaf.NotAfter)
	return leaf, nil
}

// same reports whether a and b describe the same unchanged file.
func same(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
