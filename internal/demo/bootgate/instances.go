package bootgate

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/dockerapi"
	"github.com/lockstep-dev/lockstep/internal/scenario"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

// Platform is the platform every demo instance runs.
const Platform = "linux/amd64"

// Trust is where an instance's boot gate reads its release, and whom it
// trusts: `lockstep admit --store URL --release NAME --channel NAME --key
// PUB`.
type Trust struct {
	// Store holds the release; StoreURL is how a user names it.
	Store    manifest.Store
	StoreURL string
	Release  string
	// Channel is the store channel (store.DefaultChannel when empty).
	Channel string
	// KeyPath is the public key (PEM) the manifest must be signed with;
	// KeyName how the printed command names it ("": KeyPath).
	KeyPath, KeyName string
}

// Instances boots the demo's instances on loopback: each is its app (an
// HTTP server serving its page), its Docker daemon (a Docker Engine API
// on a unix socket reporting the image it pulled) and its own trusted
// state, as a fresh machine has.
type Instances struct {
	// Dir holds the instances' sockets and state.
	Dir string
	// Client carries every request of the boot gate.
	Client *transport.Client
	// Command prints the command a user would type; Say one line of what
	// lockstep said. Nil prints nothing.
	Command func(args ...string)
	Say     func(format string, args ...any)

	n        int
	cleanups []func()
}

// Close stops every instance.
func (in *Instances) Close() {
	for i := len(in.cleanups) - 1; i >= 0; i-- {
		in.cleanups[i]()
	}
	in.cleanups = nil
}

// Boot starts an instance that pulled ref (for Platform) and serves a page
// referencing ids under cdnBase, and runs its boot gate as `lockstep
// admit --store … --release … --key … --image web --running docker:web
// --probe URL` does: the manifest is the channel's on the store, its
// signature verified with the key, rollback refused by the instance's
// trusted state. It prints the command and the decision. The error is for
// a demo that could not run; a refusal is the decision.
func (in *Instances) Boot(ctx context.Context, ref, cdnBase string, ids []string, t Trust) (admission.Decision, error) {
	in.n++
	pulled, err := scenario.Pull(ctx, ref, Platform, in.Client.Transport())
	if err != nil {
		return admission.Decision{}, fmt.Errorf("pulling %s: %w", ref, err)
	}
	page := scenario.Page(cdnBase, ids)
	probe, err := in.serve("tcp", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	if err != nil {
		return admission.Decision{}, err
	}
	home := filepath.Join(in.Dir, fmt.Sprintf("instance-%d", in.n))
	if err := os.MkdirAll(home, 0o755); err != nil {
		return admission.Decision{}, err
	}
	sock := filepath.Join(home, "docker.sock")
	if _, err := in.serve("unix", sock, dockerapi.Handler(nil, dockerapi.Container{
		ID: fmt.Sprintf("%064x", in.n), Name: "web", Reference: ref,
		ImageID: pulled.ImageID, RepoDigests: []string{pulled.RepoDigest}, OS: "linux", Arch: "amd64",
	})); err != nil {
		return admission.Decision{}, err
	}
	src, err := running.Parse("docker:web", running.Options{DockerHost: "unix://" + sock})
	if err != nil {
		return admission.Decision{}, err
	}
	key, err := signature.LoadVerifier(ctx, t.KeyPath)
	if err != nil {
		return admission.Decision{}, err
	}
	v, err := signature.NewVerifier(signature.Options{Key: key})
	if err != nil {
		return admission.Decision{}, err
	}
	state, err := trusted.Open(filepath.Join(home, "state"))
	if err != nil {
		return admission.Decision{}, err
	}
	channel := t.Channel
	if channel == "" {
		channel = store.DefaultChannel
	}
	probeURL := "http://" + probe + "/"
	keyName := t.KeyName
	if keyName == "" {
		keyName = t.KeyPath
	}
	in.command("admit", "--store", t.StoreURL, "--release", t.Release, "--key", keyName,
		"--image", "web", "--running", "docker:web", "--probe", probeURL)
	upstream := store.ChannelSource{Store: t.Store, Release: t.Release, Channel: channel, Name: t.StoreURL}
	d := admission.Check(ctx, admission.Config{
		CDN:      cdngate.Checker{},
		Source:   &trusted.Source{Upstream: upstream, State: state, Release: t.Release},
		Verifier: v, Guard: state,
		Image: "web", Running: src, Platform: Platform, Probes: []string{probeURL},
		Client: in.Client, Timeout: 30 * time.Second,
	})
	if in.Say != nil {
		Render(in.Say, d)
	}
	return d, nil
}

// Render says a decision as `lockstep admit` reports it: the verdict with
// its exit code, then each refusing finding.
func Render(say func(format string, args ...any), d admission.Decision) {
	verdict := "ADMITTED (exit 0)"
	if !d.Allowed {
		verdict = "REFUSED (exit 1)"
		if d.Unverified {
			verdict = "REFUSED: could not verify (exit 3)"
		}
	}
	say("%s: %s generation %d, running %s, %d assets served, %d CDN checks, %d requests in %s", verdict, d.Release, d.Generation, d.RunningDigest, len(d.Served), d.CDNChecked, d.Requests, d.Duration.Round(time.Millisecond))
	for _, f := range d.Findings {
		if f.Severity == admission.Refuse {
			say("  %s: %s", f.Kind, f.Message)
		}
	}
}

func (in *Instances) command(args ...string) {
	if in.Command != nil {
		in.Command(args...)
	}
}

// serve serves h on a listener until Close and returns its address.
func (in *Instances) serve(network, addr string, h http.Handler) (string, error) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	in.cleanups = append(in.cleanups, func() { srv.Close() })
	return l.Addr().String(), nil
}
