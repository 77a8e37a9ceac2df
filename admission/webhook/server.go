package webhook

import (
	"github.com/lockstep-dev/lockstep/internal/imagename"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Config is a webhook server's configuration.
type Config struct {
	// Listen is the TCP address to listen on, e.g. ":8443". Ignored when
	// Listener is set.
	Listen string
	// Listener, when set, is used instead of listening on Listen.
	Listener net.Listener
	// CertFile and KeyFile are the serving certificate (PEM, with its
	// chain) and key; they are re-read when they change.
	CertFile, KeyFile string
	// CertCheckInterval is how often, at most, the files are checked
	// (default 5s).
	CertCheckInterval time.Duration

	// Source is where the manifest comes from; Verifier checks it
	// (required unless AllowUnsigned).
	Source        manifest.Source
	Verifier      manifest.Verifier
	AllowUnsigned bool
	// Refresh is the manifest refresh interval (default 30s, ±10%).
	Refresh time.Duration

	Mode      Mode
	Unmanaged Unmanaged
	// Names normalises repository names, with the registry aliases
	// (--registry-alias).
	Names imagename.Names

	// Logger gets the server's logs (default: discard).
	Logger *slog.Logger
	// ShutdownTimeout bounds the graceful shutdown (default 10s).
	ShutdownTimeout time.Duration
}

// Serve runs the webhook until ctx is done, then shuts down gracefully and
// returns nil. It serves over TLS: POST /validate (the AdmissionReview
// handler), GET /healthz (200 while serving), GET /readyz (200 once a
// manifest is loaded, 503 before and while shutting down) and GET /metrics.
// It returns an error, before serving, for a bad configuration, a
// certificate that does not load or an address it cannot listen on.
func Serve(ctx context.Context, c Config) error {
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 10 * time.Second
	}
	mode, err := ParseMode(string(c.Mode))
	if err != nil {
		return err
	}
	unmanaged, err := ParseUnmanaged(string(c.Unmanaged))
	if err != nil {
		return err
	}
	metrics := NewMetrics()
	follower, err := NewFollower(c.Source, FollowOptions{
		Verifier: c.Verifier, AllowUnsigned: c.AllowUnsigned, Logger: c.Logger, Metrics: metrics, Names: c.Names,
	})
	if err != nil {
		return err
	}
	certs, err := NewCertReloader(c.CertFile, c.KeyFile, CertOptions{
		CheckInterval: c.CertCheckInterval, Logger: c.Logger, Metrics: metrics,
	})
	if err != nil {
		return err
	}
	ln := c.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", c.Listen); err != nil {
			return fmt.Errorf("listening on %s: %w", c.Listen, err)
		}
	}
	var stopping atomic.Bool
	mux := http.NewServeMux()
	mux.Handle("/validate", NewHandler(follower, Options{Mode: mode, Unmanaged: unmanaged, Logger: c.Logger, Metrics: metrics}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		switch a := follower.Manifest(); {
		case stopping.Load():
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
		case a == nil:
			http.Error(w, "no verified release manifest loaded yet", http.StatusServiceUnavailable)
		default:
			fmt.Fprintf(w, "ok: release %s\n", a.ID())
		}
	})
	mux.Handle("GET /metrics", metrics.Handler())
	srv := &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(c.Logger.Handler(), slog.LevelDebug),
	}

	runCtx, stopRun := context.WithCancel(ctx)
	following := make(chan struct{})
	go func() { follower.Run(runCtx, c.Refresh); close(following) }()
	defer func() { stopRun(); <-following }()
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	c.Logger.Info("webhook serving", "addr", ln.Addr().String(), "mode", mode, "unmanaged", unmanaged)

	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	stopping.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
