package agent

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultListen is the address the agent binds to unless told otherwise.
const DefaultListen = "127.0.0.1:9464"

// ServeOptions says where and how the agent's endpoints are served.
type ServeOptions struct {
	// Addr is host:port; default DefaultListen. A host that is not a
	// loopback address (or empty, meaning every interface) is refused unless
	// Token or client-certificate TLS is set.
	Addr string
	// Token, if set, is the bearer token GET /v1/status and /metrics
	// require (compared in constant time). /healthz stays open: a load
	// balancer's health check sends no credentials, and it says only
	// whether the instance is admitted.
	Token []byte
	// TLS, if set, serves HTTPS. With ClientAuth VerifyClientCertIfGiven or
	// stronger and ClientCAs set (see ServerTLS), /v1/status and /metrics
	// require a verified client certificate.
	TLS *tls.Config
}

// ErrExposed is returned for a non-loopback address without a token or
// client certificates.
var ErrExposed = errors.New("a non-loopback address needs a token or client certificates")

// Check returns an error for options that would expose the status and
// metrics without authentication, or that are incomplete.
func (o ServeOptions) Check() error {
	addr := o.addr()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if isLoopback(host) || len(o.Token) > 0 || o.clientCerts() {
		return nil
	}
	return fmt.Errorf("listen address %q: %w", addr, ErrExposed)
}

func (o ServeOptions) addr() string {
	if o.Addr == "" {
		return DefaultListen
	}
	return o.Addr
}

func (o ServeOptions) clientCerts() bool {
	return o.TLS != nil && o.TLS.ClientCAs != nil && o.TLS.ClientAuth >= tls.VerifyClientCertIfGiven
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServerTLS loads a server certificate and key (PEM files) and, when
// clientCA is set, the CAs whose client certificates are accepted. /healthz
// needs no client certificate; the other endpoints do (VerifyClientCertIfGiven
// plus a check in the handler).
func ServerTLS(certFile, keyFile, clientCA string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the TLS certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA != "" {
		pem, err := os.ReadFile(clientCA)
		if err != nil {
			return nil, fmt.Errorf("reading the client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client CA %s: no PEM certificate", clientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// Handler returns the agent's endpoints with the authentication o asks for.
func (a *Agent) Handler(o ServeOptions) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.Handle("GET /v1/status", o.protect(http.HandlerFunc(a.serveStatus)))
	mux.Handle("GET /metrics", o.protect(promhttp.HandlerFor(a.metrics.reg, promhttp.HandlerOpts{})))
	return mux
}

func (a *Agent) healthz(w http.ResponseWriter, _ *http.Request) {
	st := a.Status()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if st.State != StateAdmitted {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprintln(w, st.State)
}

func (a *Agent) serveStatus(w http.ResponseWriter, _ *http.Request) {
	st := a.Status()
	b, err := json.Marshal(st)
	if err != nil {
		http.Error(w, "encoding the status", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(b, '\n'))
}

func (o ServeOptions) protect(h http.Handler) http.Handler {
	if len(o.Token) == 0 && !o.clientCerts() {
		return h
	}
	want := []byte("Bearer " + string(o.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := false
		if len(o.Token) > 0 {
			ok = subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1
		}
		if !ok && o.clientCerts() && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
			ok = true
		}
		if !ok {
			if len(o.Token) > 0 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="lockstep-agent"`)
			}
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Serve checks o, binds to its address and serves a's endpoints until ctx
// is done, then shuts down within 5 s. ready, if set, is called with the
// bound address once the agent listens. It does not run the checks: call
// Agent.Run beside it.
func Serve(ctx context.Context, a *Agent, o ServeOptions, ready func(net.Addr)) error {
	if err := o.Check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr())
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.addr(), err)
	}
	if o.TLS != nil {
		ln = tls.NewListener(ln, o.TLS)
	}
	srv := &http.Server{
		Handler:           a.Handler(o),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// ServeAndRun is the agent as `lockstep agent` runs it: Serve on o and
// a.Run beside it, until ctx is done or the server fails. Its error is
// Serve's. It returns once a.Run has returned too (at most runStopWait
// after the server stops), so that no check goes on, or logs, after it.
func ServeAndRun(ctx context.Context, a *Agent, o ServeOptions, ready func(net.Addr)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Run(ctx)
	}()
	err := Serve(ctx, a, o, ready)
	cancel()
	select {
	case <-done:
	case <-time.After(runStopWait):
	}
	return err
}

// runStopWait bounds how long ServeAndRun waits for a.Run to return once
// the server has stopped: a check ends at its context's cancellation.
const runStopWait = 10 * time.Second
