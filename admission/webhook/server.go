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
	"strings"
	"sync"
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
	// Routes, when set, replace Source: one webhook governs several
	// releases, each followed from its route's Source (see Routes and
	// NewRoutedHandler). Routes of the same release and channel share one
	// follower.
	Routes []SourceRoute
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
	fo := FollowOptions{Verifier: c.Verifier, AllowUnsigned: c.AllowUnsigned, Logger: c.Logger, Metrics: metrics, Names: c.Names}
	followers, handler, err := newFollowers(c, fo, Options{Mode: mode, Unmanaged: unmanaged, Logger: c.Logger, Metrics: metrics, Names: c.Names})
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
	mux.Handle("/validate", handler)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if stopping.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		var ids []string
		for _, f := range followers {
			a := f.Manifest()
			if a == nil {
				msg := "no verified release manifest loaded yet"
				if len(c.Routes) > 0 {
					msg = "no verified manifest of release " + f.release + " loaded yet"
				}
				http.Error(w, msg, http.StatusServiceUnavailable)
				return
			}
			ids = append(ids, a.ID())
		}
		fmt.Fprintf(w, "ok: release %s\n", strings.Join(ids, ", "))
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
	var following sync.WaitGroup
	for _, f := range followers {
		following.Add(1)
		go func() { defer following.Done(); f.Run(runCtx, c.Refresh) }()
	}
	defer func() { stopRun(); following.Wait() }()
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

// SourceRoute is a Route and where its release's manifest comes from.
type SourceRoute struct {
	Route
	Source manifest.Source
}

// namedFollower is a Follower and the release it follows, for /readyz.
type namedFollower struct {
	*Follower
	release string
}

// newFollowers makes the followers of c (one for Source, or one per
// release and channel of Routes) and the handler judging against them.
func newFollowers(c Config, fo FollowOptions, o Options) ([]namedFollower, *Handler, error) {
	if len(c.Routes) == 0 {
		f, err := NewFollower(c.Source, fo)
		if err != nil {
			return nil, nil, err
		}
		return []namedFollower{{f, ""}}, NewHandler(f, o), nil
	}
	if c.Source != nil {
		return nil, nil, errors.New("a Source and Routes: give one")
	}
	var followers []namedFollower
	byKey := map[string]*Follower{}
	rs := make([]RoutedManifests, len(c.Routes))
	for i, r := range c.Routes {
		key := r.Release + "\x00" + r.Channel
		f := byKey[key]
		if f == nil {
			var err error
			if f, err = NewFollower(r.Source, fo); err != nil {
				return nil, nil, fmt.Errorf("route %d (release %s): %w", i, r.Release, err)
			}
			byKey[key] = f
			followers = append(followers, namedFollower{f, r.Release})
		}
		rs[i] = RoutedManifests{Route: r.Route, Manifests: f}
	}
	h, err := NewRoutedHandler(rs, o)
	if err != nil {
		return nil, nil, err
	}
	return followers, h, nil
}
