package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

func TestServeOptionsCheck(t *testing.T) {
	mtls := &tls.Config{ClientCAs: x509.NewCertPool(), ClientAuth: tls.VerifyClientCertIfGiven}
	tests := []struct {
		opts    ServeOptions
		exposed bool
	}{
		{ServeOptions{}, false},
		{ServeOptions{Addr: "127.0.0.1:9464"}, false},
		{ServeOptions{Addr: "[::1]:9464"}, false},
		{ServeOptions{Addr: "localhost:9464"}, false},
		{ServeOptions{Addr: ":9464"}, true},
		{ServeOptions{Addr: "0.0.0.0:9464"}, true},
		{ServeOptions{Addr: "10.0.0.5:9464"}, true},
		{ServeOptions{Addr: "0.0.0.0:9464", TLS: &tls.Config{}}, true}, // TLS alone authenticates nobody
		{ServeOptions{Addr: "0.0.0.0:9464", Token: []byte("s3cret")}, false},
		{ServeOptions{Addr: "0.0.0.0:9464", TLS: mtls}, false},
	}
	for _, tt := range tests {
		err := tt.opts.Check()
		if got := errors.Is(err, ErrExposed); got != tt.exposed {
			t.Errorf("Check(addr %q, token %t, tls %t) = %v, want exposed %t", tt.opts.Addr, tt.opts.Token != nil, tt.opts.TLS != nil, err, tt.exposed)
		}
	}
	if err := (ServeOptions{Addr: "nonsense"}).Check(); err == nil || errors.Is(err, ErrExposed) {
		t.Errorf("Check(nonsense) = %v, want an address error", err)
	}
}

func TestToken(t *testing.T) {
	a := New(Config{Checker: &fakeChecker{results: []Result{admitted(t, 7)}}})
	a.CheckNow(context.Background())
	h := a.Handler(ServeOptions{Token: []byte("s3cret")})
	tests := []struct {
		path, auth string
		want       int
	}{
		{"/v1/status", "", http.StatusUnauthorized},
		{"/v1/status", "Bearer wrong", http.StatusUnauthorized},
		{"/v1/status", "Bearer s3cret", http.StatusOK},
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "Bearer s3cret", http.StatusOK},
		{"/healthz", "", http.StatusOK},
	}
	for _, tt := range tests {
		if rec := get(t, h, tt.path, "Authorization", tt.auth); rec.Code != tt.want {
			t.Errorf("GET %s with %q = %d, want %d", tt.path, tt.auth, rec.Code, tt.want)
		}
	}
}

// serve runs the agent's server on a loopback port and returns its address.
func serve(t *testing.T, a *Agent, o ServeOptions) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, a, o, func(ad net.Addr) { addrc <- ad.String() }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	select {
	case ad := <-addrc:
		return ad
	case err := <-errc:
		t.Fatalf("Serve: %v", err)
	}
	return ""
}

func TestServeClientCertificates(t *testing.T) {
	pki := tlstest.NewPKI(t)
	cfg, err := ServerTLS(pki.ServerCert, pki.ServerKey, pki.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	a := New(Config{Checker: &fakeChecker{results: []Result{admitted(t, 7)}}})
	a.CheckNow(context.Background())
	addr := serve(t, a, ServeOptions{Addr: "127.0.0.1:0", TLS: cfg})
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Roots, Certificates: certs}}}
	}
	tests := []struct {
		name   string
		client *http.Client
		path   string
		want   int
	}{
		{"status without a certificate", client(), "/v1/status", http.StatusUnauthorized},
		{"metrics without a certificate", client(), "/metrics", http.StatusUnauthorized},
		{"healthz without a certificate", client(), "/healthz", http.StatusOK},
		{"status with a certificate", client(pki.Client), "/v1/status", http.StatusOK},
	}
	for _, tt := range tests {
		resp, err := tt.client.Get("https://" + addr + tt.path)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: GET %s = %d, want %d", tt.name, tt.path, resp.StatusCode, tt.want)
		}
	}
}

func TestServeRefusesAnExposedAddress(t *testing.T) {
	a := New(Config{Checker: &fakeChecker{results: []Result{admitted(t, 7)}}})
	err := Serve(context.Background(), a, ServeOptions{Addr: "0.0.0.0:0"}, nil)
	if !errors.Is(err, ErrExposed) {
		t.Errorf("Serve(0.0.0.0:0) = %v, want ErrExposed", err)
	}
}

func TestServePlain(t *testing.T) {
	a := New(Config{Checker: &fakeChecker{results: []Result{admitted(t, 7)}}})
	a.CheckNow(context.Background())
	addr := serve(t, a, ServeOptions{Addr: "127.0.0.1:0"})
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body := readAll(t, resp.Body); resp.StatusCode != http.StatusOK || body != "admitted\n" {
		t.Errorf("GET /healthz = %d %q", resp.StatusCode, body)
	}
	post, err := http.Post("http://"+addr+"/healthz", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz = %d, want 405", post.StatusCode)
	}
}

// TestServeAndRun: it serves and runs the checks, and returns nil once its
// context ends.
func TestServeAndRun(t *testing.T) {
	f := &fakeChecker{results: []Result{admitted(t, 7)}, done: make(chan int64, 1)}
	a := New(Config{Checker: f, Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc, errc := make(chan string, 1), make(chan error, 1)
	go func() {
		errc <- ServeAndRun(ctx, a, ServeOptions{Addr: "127.0.0.1:0"}, func(ad net.Addr) { addrc <- ad.String() })
	}()
	for _, wait := range []func() bool{
		func() bool { _, ok := <-addrc; return ok },
		func() bool { _, ok := <-f.done; return ok },
	} {
		got := make(chan bool, 1)
		go func() { got <- wait() }()
		select {
		case <-got:
		case err := <-errc:
			t.Fatalf("ServeAndRun ended early: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("ServeAndRun neither listened nor ran a check within 10 s")
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("ServeAndRun after cancel = %v, want nil", err)
	}
}
