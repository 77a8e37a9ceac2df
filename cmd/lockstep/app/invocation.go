package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/internal/termbar"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/s3store"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/prune"
	"github.com/lockstep-dev/lockstep/prune/s3origin"
)

// invocation is one run's collaborators, built once in the app's Before
// (start), as ctr builds one client from its global flags: the logger,
// the run's own environment, and the factories of its transports, stores
// and origins. Each command's action gets it from the command's
// constructor and hands it down with the options it reads from its
// flags; nothing below an action climbs back to the *cli.Context (or to
// the app's metadata) for a logger or a client.
type invocation struct {
	// log is the logger commands hand to libraries: text on the app's
	// ErrWriter at --log-level. It is one logger per run, so that
	// libraries logging from several goroutines (record pins while it
	// hashes) write through one handler and its lock, never two at once.
	log *slog.Logger
	// errw is the app's ErrWriter (progress bars draw on it when it is a
	// terminal).
	errw io.Writer
	// env is the run's own environment (Run's env), read before the
	// process's by lookupEnv.
	env map[string]string
	// listeners are sockets handed over to the run, by the address a
	// --listen flag names: a server command serves on the one handed over
	// for its address instead of binding it (see listener). Whoever starts
	// the run binds first, so nothing else can take the port between.
	listeners map[string]net.Listener
	// stores are the stores openStore opened on a client of their own,
	// by URL: a run that reads one store twice (record --generation auto
	// --previous store) opens it, and loads its AWS configuration, once.
	stores   map[string]manifest.Store
	storesMu sync.Mutex
}

// newInvocation is the invocation of an app not started yet: silent until
// start, with env as the run's own environment.
func newInvocation(env map[string]string) *invocation {
	return &invocation{log: slog.New(slog.DiscardHandler), errw: io.Discard, env: env}
}

// start builds the run's collaborators from the app's global flags: the
// logger on errw at level.
func (inv *invocation) start(errw io.Writer, level slog.Level) {
	inv.errw = errw
	inv.log = slog.New(slog.NewTextHandler(termbar.Lines(errw), &slog.HandlerOptions{Level: level}))
}

// listener is the socket handed over for address (host:port as --listen
// names it), or nil: the server binds address itself.
func (inv *invocation) listener(address string) net.Listener {
	return inv.listeners[address]
}

// lookupEnv is os.LookupEnv for the run: its own environment (Run's env)
// first, then the process's.
func (inv *invocation) lookupEnv(name string) (string, bool) {
	if v, ok := inv.env[name]; ok {
		return v, true
	}
	return os.LookupEnv(name)
}

// getenv is os.Getenv for the run (lookupEnv).
func (inv *invocation) getenv(name string) string {
	v, _ := inv.lookupEnv(name)
	return v
}

// password is the run's key password: COSIGN_PASSWORD as lookupEnv finds
// it (signature.EnvPassword over the run's environment).
func (inv *invocation) password() signature.PassFunc {
	return signature.LookupPassword(inv.lookupEnv)
}

// clientOptions say what a command's transport takes from its flags and
// the environment, beside its policy.
type clientOptions struct {
	// Gate applies the rules of every request the probe, the agent and the
	// fleet check send (gateOptions): never a redirect to another origin,
	// never a link-local or metadata address unless AllowLinkLocal.
	Gate bool
	// AllowLinkLocal is --allow-link-local: with Gate, link-local and
	// metadata addresses may be contacted.
	AllowLinkLocal bool
	// Bundle is AWS_CA_BUNDLE, for the commands that reach AWS
	// (awsCABundle): trusted with the system's roots, for every endpoint.
	Bundle *caBundle
	// TLS is the client TLS configuration: fleet's agent flags.
	TLS *tls.Config
	// Log sends the transport's retries and waits to the run's logger.
	Log bool
	// UniquePaths says that every request has a path of its own (cdn
	// check): HTTP/2 header compression indexes none of them
	// (transport.WithoutHeaderIndexing).
	UniquePaths bool
	// LeanHeads sends plain-HTTP/1.1 HEADs on the transport's own
	// connections (transport.WithLeanHeads): cdn check.
	LeanHeads bool
}

// client is the one constructor of the shared transport
// (internal/transport): policy p, with what o asks for.
func (inv *invocation) client(p transport.Policy, o clientOptions) *transport.Client {
	var opts []transport.Option
	if o.Gate {
		opts = append(opts, gateOptions(o.AllowLinkLocal)...)
	}
	if o.Log {
		opts = append(opts, transport.WithLogger(inv.log))
	}
	if o.Bundle != nil {
		opts = append(opts, transport.WithTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}), transport.WithRootCAs(o.Bundle.roots))
	}
	if o.TLS != nil {
		opts = append(opts, transport.WithTLSConfig(o.TLS))
	}
	if o.UniquePaths {
		opts = append(opts, transport.WithoutHeaderIndexing())
	}
	if o.LeanHeads {
		opts = append(opts, transport.WithLeanHeads())
	}
	return transport.New(p, opts...)
}

// gateOptions are the rules of every request the probe, the agent and
// the fleet check send: never follow a redirect to another origin, and
// never contact a link-local or metadata address unless allowLinkLocal
// (--allow-link-local).
func gateOptions(allowLinkLocal bool) []transport.Option {
	opts := []transport.Option{transport.WithSameOriginRedirects()}
	if !allowLinkLocal {
		opts = append(opts, transport.WithDeniedAddresses(transport.LinkLocal...))
	}
	return opts
}

// openStore is the one store opener: the Store a --store URL names, with
// the run's logger. An s3:// store uses the AWS configuration
// (awsConfig) and sends on client (nil: a client of its own that trusts
// the SDK's CA bundle), so that a consumer's requests and TLS report
// include the store's; path-style addressing is used when an endpoint is
// configured (S3-compatible servers), unless LOCKSTEP_S3_PATH_STYLE says
// otherwise. Anything else is a directory (file:///DIR or a path). The URL
// is parsed (store.ParseURL) before anything is built or contacted: a bad
// one is a usage error, exit 2.
func (inv *invocation) openStore(ctx context.Context, url string, client *transport.Client) (manifest.Store, error) {
	u, err := store.ParseURL(url)
	if err != nil {
		return nil, usage(err)
	}
	if client != nil {
		return inv.newStore(ctx, u, client)
	}
	inv.storesMu.Lock()
	defer inv.storesMu.Unlock()
	if st, ok := inv.stores[url]; ok {
		return st, nil
	}
	st, err := inv.newStore(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	if inv.stores == nil {
		inv.stores = map[string]manifest.Store{}
	}
	inv.stores[url] = st
	return st, nil
}

// newStore builds the Store of a parsed --store URL (openStore).
func (inv *invocation) newStore(ctx context.Context, u store.URL, client *transport.Client) (manifest.Store, error) {
	if u.Scheme == "s3" {
		api, err := newS3Client(ctx, inv.env, client)
		if err != nil {
			return nil, err
		}
		return s3store.New(api, u.Bucket, u.Prefix, s3store.WithLogger(inv.log))
	}
	return filestore.New(u.Dir, filestore.WithLogger(inv.log))
}

// openOrigin is the one origin opener (cdn prune): the directory or S3
// prefix an --origin URL names, parsed by the store's rules
// (store.ParseURL; a bad one is a usage error, exit 2), S3 on the same
// client as openStore's. An origin that is, holds or is inside the
// manifest store storeURL is a usage error: its manifests are objects no
// manifest lists.
func (inv *invocation) openOrigin(ctx context.Context, url, storeURL string) (prune.Origin, error) {
	u, err := store.ParseURL(url)
	if err != nil {
		return nil, usage(fmt.Errorf("--origin: %w", err))
	}
	if su, err := store.ParseURL(storeURL); err == nil && u.Overlaps(su) {
		return nil, usage(fmt.Errorf("--origin %s overlaps --store %s: the store's files are not assets", u, su))
	}
	if u.Scheme == "s3" {
		api, err := newS3Client(ctx, inv.env, nil)
		if err != nil {
			return nil, err
		}
		return s3origin.New(api, u.Bucket, u.Prefix)
	}
	return prune.Dir(u.Dir), nil
}

// progress returns a progress callback drawing a bar on the run's
// ErrWriter when it is a terminal, or nil.
func (inv *invocation) progress(what string) func(done, total int) {
	fd, ok := inv.errw.(*os.File)
	if !ok || !term.IsTerminal(int(fd.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(fd), progressbar.OptionSetDescription(what),
				progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		bar.Set(done)
	}
}

// act is a command's Action: fn, given the run's invocation.
func (inv *invocation) act(fn func(*cli.Context, *invocation) error) cli.ActionFunc {
	return func(c *cli.Context) error { return fn(c, inv) }
}

// flagValues is what the helpers below an action read of its command's
// parsed flags: their values, and nothing else of the *cli.Context (not
// its app, writers or context), so that a helper turns flags into options
// and takes its logger, clients and context from its caller.
// *cli.Context is one.
type flagValues interface {
	String(name string) string
	Bool(name string) bool
	Int(name string) int
	Uint64(name string) uint64
	Float64(name string) float64
	Duration(name string) time.Duration
	StringSlice(name string) []string
	Generic(name string) any
	IsSet(name string) bool
}

var _ flagValues = (*cli.Context)(nil)
