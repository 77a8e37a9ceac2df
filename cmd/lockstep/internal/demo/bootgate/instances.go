package bootgate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/fixture/dockerapi"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/transport"
)

// Platform is the platform every demo instance runs.
const Platform = "linux/amd64"

// Trust is where an instance's boot gate reads its release, and whom it
// trusts: `lockstep admit --store URL --release NAME --key PUB`.
type Trust struct {
	// StoreURL is the store (--store).
	StoreURL string
	Release  string
	// KeyPath is the public key (PEM) the manifest must be signed with.
	KeyPath string
}

// Instances boots the demo's instances on loopback: each is its app (an
// HTTP server serving its page), its Docker daemon (a Docker Engine API
// on a unix socket reporting the image it pulled) and its own trusted
// state, as a fresh machine has.
type Instances struct {
	// Dir holds the instances' sockets and state.
	Dir string
	// Client carries the requests that set an instance up (the pull).
	Client *transport.Client
	// Run runs `lockstep ARGS` with env ("NAME=value") in its own
	// environment, printing it and what it said, and returns its exit
	// code (the demo's Env.LockstepEnv).
	Run func(ctx context.Context, env []string, args ...string) int
	// Say prints a line of the narrative; nil prints nothing.
	Say func(format string, args ...any)

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
// referencing ids under cdnBase, and runs its boot gate: `lockstep admit`
// against the instance's Docker daemon (DOCKER_HOST), its page (--probe)
// and its trusted state (--state-dir), writing the decision to --report
// too. It returns that decision, once admit's exit code is the one the
// decision calls for (0 admitted, 1 refused, 3 could not verify). The
// error is for a demo that could not run; a refusal is the decision.
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
	if in.Say != nil {
		in.Say("instance %d: its Docker daemon at %s runs %s (%s); its page is at http://%s/", in.n, sock, ref, pulled.RepoDigest, probe)
	}
	report := filepath.Join(home, "admit.json")
	code := in.Run(ctx, []string{"DOCKER_HOST=unix://" + sock}, "admit",
		"--store", t.StoreURL, "--release", t.Release, "--key", t.KeyPath,
		"--image", "web", "--running", "docker:web", "--platform", Platform, "--probe", "http://"+probe+"/",
		"--state-dir", filepath.Join(home, "state"), "--report", report)
	raw, err := os.ReadFile(report)
	if err != nil {
		return admission.Decision{}, fmt.Errorf("admit exited %d and wrote no decision: %w", code, err)
	}
	var d admission.Decision
	if err := json.Unmarshal(raw, &d); err != nil {
		return admission.Decision{}, fmt.Errorf("admit's decision %s: %w", report, err)
	}
	want := 0
	switch {
	case d.Unverified:
		want = 3
	case !d.Allowed:
		want = 1
	}
	if code != want {
		return d, fmt.Errorf("admit exited %d on a decision that calls for %d (allowed %v)", code, want, d.Allowed)
	}
	return d, nil
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
