package browsertest

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/launcher/flags"
	"github.com/go-rod/rod/lib/proto"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// Browser is a running headless Chromium. Its Load calls run one at a
// time.
type Browser struct {
	rod      *rod.Browser
	launcher *launcher.Launcher
	ca       *tlstest.CA
	mu       sync.Mutex // one Load at a time
	// Version is the browser's product, e.g. "Chrome/156.0.8078.114".
	Version string
}

// Flags are Chromium's flags besides --headless=new, the user data
// directory and the trusted key: as root without the sandbox, off the network
// (no background networking, component updates, sync or QUIC).
var Flags = []string{"no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync", "disable-dev-shm-usage"}

// Start starts Chromium for the rest of the test (stopped when it ends; a
// test binary starts it once, in its top-level test, and shares it with
// the subtests). Chromium missing skips the test, or fails it under
// LOCKSTEP_INTEGRATION=1; a browser that does not start fails it.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := testenv.Require(t, "chromium", "chromium-browser", "google-chrome")
	ca := tlstest.NewCA(t)
	spki := sha256.Sum256(ca.Cert.RawSubjectPublicKeyInfo)
	dir := t.TempDir()
	l := launcher.New().Bin(bin).Leakless(false).HeadlessNew(true).UserDataDir(filepath.Join(dir, "profile")).
		Delete("enable-automation").
		Set("ignore-certificate-errors-spki-list", base64.StdEncoding.EncodeToString(spki[:]))
	for _, f := range Flags {
		l = l.Set(flags.Flag(f))
	}
	u, err := l.Launch()
	if err != nil {
		l.Kill()
		t.Fatalf("starting %s: %v (what to do: run %s --headless=new --no-sandbox --dump-dom about:blank, and scripts/install-deps.sh)", bin, err, bin)
	}
	b := &Browser{rod: rod.New().ControlURL(u), launcher: l, ca: ca}
	t.Cleanup(func() {
		b.rod.Close()
		l.Kill()
		l.Cleanup()
	})
	if err := b.rod.Connect(); err != nil {
		t.Fatalf("connecting to %s: %v", bin, err)
	}
	v, err := proto.BrowserGetVersion{}.Call(b.rod)
	if err != nil {
		t.Fatalf("asking %s its version: %v", bin, err)
	}
	b.Version = v.Product
	// Every target is attached as it starts, paused until its events are
	// on (Load resumes it); targets of other loads are resumed at once.
	if err := (proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}).Call(b.rod); err != nil {
		t.Fatalf("auto-attaching to %s's targets: %v", bin, err)
	}
	return b
}

// ServerCert returns a certificate for the DNS names and 127.0.0.1, signed
// by the browser's CA, valid from an hour ago for a day: the browser
// trusts it. Its chain holds the CA.
func (b *Browser) ServerCert(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	cert, key := b.ca.Issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "browsertest server"},
		NotBefore:   time.Now().Add(-time.Hour),
		NotAfter:    time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    names,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	})
	return tls.Certificate{Certificate: [][]byte{cert.Raw, b.ca.Cert.Raw}, PrivateKey: key, Leaf: cert}
}

// WriteServerCert writes a ServerCert for names as PEM files in dir (the
// chain, then the key), for a server such as nginx, and returns their
// paths.
func (b *Browser) WriteServerCert(t testing.TB, dir string, names ...string) (certFile, keyFile string) {
	t.Helper()
	pair := b.ServerCert(t, names...)
	var chain []byte
	for _, der := range pair.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	der, err := x509.MarshalPKCS8PrivateKey(pair.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, chain, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// Roots is a pool that trusts the browser's CA, for a Go client that
// talks to the same servers.
func (b *Browser) Roots() *x509.CertPool { return b.ca.Pool }
