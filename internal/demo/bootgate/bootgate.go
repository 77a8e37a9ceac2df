// Package bootgate is the boot-gate part of `lockstep demo`: the Epic
// 2021 scenario end to end. Release v1 is recorded and put on the CDN; a
// good instance is admitted; CI silently re-pushes the tag with a build
// that serves a new asset ID; a new instance booting during a scale-up is
// refused with image-digest-mismatch and asset-missing-on-cdn.
//
// It needs a registry and a CDN (a directory some web server serves) and
// starts everything else itself, on loopback: each instance's app (an
// HTTP server serving its page) and its Docker daemon (a Docker Engine API
// on a unix socket reporting what the instance pulled).
package bootgate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/admission/running/runningtest"
	"github.com/lockstep-dev/lockstep/internal/scenario"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// Env is what the demo runs against.
type Env struct {
	// Registry is a registry's host:port (plain http on loopback).
	Registry string
	// CDNDir is the directory the CDN serves at CDNBase.
	CDNDir, CDNBase string
	// WorkDir holds the manifest and the instances' sockets; empty means
	// a temporary directory, removed at the end.
	WorkDir string
	// Out receives the story.
	Out io.Writer
}

// Step is one named step of the demo.
type Step struct {
	Name string
	Run  func(ctx context.Context) error
}

// Run plays every step in order and cleans up; it returns the first
// step's error, or an error if a decision is not the one the story needs.
func Run(ctx context.Context, env Env) error {
	steps, cleanup, err := Steps(env)
	if err != nil {
		return err
	}
	defer cleanup()
	for i, s := range steps {
		fmt.Fprintf(env.Out, "\n== boot gate %d/%d: %s\n", i+1, len(steps), s.Name)
		if err := s.Run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}

// Steps returns the demo's steps, to be run in order, and a cleanup that
// stops what they started.
func Steps(env Env) ([]Step, func(), error) {
	p := &play{env: env, client: transport.New(transport.DefaultPolicy())}
	if p.env.Out == nil {
		p.env.Out = io.Discard
	}
	if p.env.WorkDir == "" {
		dir, err := os.MkdirTemp("", "lockstep-bootgate-")
		if err != nil {
			return nil, nil, err
		}
		p.env.WorkDir = dir
		p.cleanups = append(p.cleanups, func() { os.RemoveAll(dir) })
	}
	p.ref = env.Registry + "/store/web:v1"
	cleanup := func() {
		for i := len(p.cleanups) - 1; i >= 0; i-- {
			p.cleanups[i]()
		}
	}
	return []Step{
		{"release v1 is built, pinned, recorded and its assets put on the CDN", p.release},
		{"an instance of v1 boots and is admitted", p.goodInstance},
		{"CI silently re-pushes the v1 tag with a build that serves a new asset ID", p.repush},
		{"a new instance boots during a scale-up and is refused", p.newInstance},
	}, cleanup, nil
}

const platform = "linux/amd64"

type play struct {
	env          Env
	client       *transport.Client
	ref          string
	manifestPath string
	served       []string
	newAsset     string
	cleanups     []func()
	instances    int
}

func (p *play) say(format string, args ...any) { fmt.Fprintf(p.env.Out, "   "+format+"\n", args...) }

func (p *play) release(ctx context.Context) error {
	rt := p.client.Transport()
	if err := scenario.Push(ctx, p.ref, 1, rt, platform); err != nil {
		return fmt.Errorf("pushing %s: %w", p.ref, err)
	}
	im, err := registry.Pin(ctx, "web", p.ref, registry.Options{Remote: []remote.Option{remote.WithTransport(rt)}})
	if err != nil {
		return err
	}
	p.say("pinned %s -> %s (config %s)", p.ref, im.Digest, im.Platforms[0].Config)
	files := scenario.Assets("v1", 12)
	if err := scenario.WriteFiles(p.env.CDNDir, files); err != nil {
		return err
	}
	base := strings.TrimSuffix(p.env.CDNBase, "/") + "/"
	m, raw, err := scenario.Manifest("store-web", 1, []manifest.Image{*im}, []string{base}, files)
	if err != nil {
		return err
	}
	p.manifestPath = filepath.Join(p.env.WorkDir, "store-web.json")
	if err := os.WriteFile(p.manifestPath, raw, 0o644); err != nil {
		return err
	}
	p.served = scenario.Paths(files)[:6]
	p.say("recorded %s: %d assets on %s, fingerprint %s", m.ID(), len(m.Assets.Files), base, m.Assets.Fingerprint)
	return nil
}

func (p *play) goodInstance(ctx context.Context) error {
	d, err := p.boot(ctx, p.served)
	if err != nil {
		return err
	}
	if !d.Allowed {
		return errors.New("the v1 instance was refused")
	}
	return nil
}

func (p *play) repush(ctx context.Context) error {
	if err := scenario.Push(ctx, p.ref, 2, p.client.Transport(), platform); err != nil {
		return err
	}
	pulled, err := scenario.Pull(ctx, p.ref, platform, p.client.Transport())
	if err != nil {
		return err
	}
	p.newAsset = scenario.ID("js/app.js", "console.log('built again, by the re-push')")
	p.say("%s now resolves to %s; the new build's page references %s, which nobody uploaded to the CDN", p.ref, strings.SplitN(pulled.RepoDigest, "@", 2)[1], p.newAsset)
	p.say("every dashboard still says \"v1\" everywhere")
	return nil
}

func (p *play) newInstance(ctx context.Context) error {
	d, err := p.boot(ctx, append(slices.Clone(p.served), p.newAsset))
	if err != nil {
		return err
	}
	if d.Allowed {
		return errors.New("the re-pushed instance was admitted")
	}
	for _, k := range []admission.Kind{admission.KindImageDigestMismatch, admission.KindAssetMissingOnCDN} {
		if !d.Has(k) {
			return fmt.Errorf("the re-pushed instance was refused without %s", k)
		}
	}
	p.say("the instance never joins the fleet: with --lifecycle-hook, its lifecycle action is ABANDON and the group replaces it")
	return nil
}

// boot starts an instance that pulled the tag and serves a page with the
// given asset IDs, and runs the boot gate on it.
func (p *play) boot(ctx context.Context, ids []string) (admission.Decision, error) {
	p.instances++
	pulled, err := scenario.Pull(ctx, p.ref, platform, p.client.Transport())
	if err != nil {
		return admission.Decision{}, err
	}
	page := scenario.Page(p.env.CDNBase, ids)
	probe, err := p.serve("tcp", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	if err != nil {
		return admission.Decision{}, err
	}
	sock := filepath.Join(p.env.WorkDir, fmt.Sprintf("docker-%d.sock", p.instances))
	if _, err := p.serve("unix", sock, runningtest.DockerHandler(nil, runningtest.Container{
		ID: fmt.Sprintf("%064x", p.instances), Name: "web", Reference: p.ref,
		ImageID: pulled.ImageID, RepoDigests: []string{pulled.RepoDigest}, OS: "linux", Arch: "amd64",
	})); err != nil {
		return admission.Decision{}, err
	}
	src, err := running.Parse("docker:web", running.Options{DockerHost: "unix://" + sock})
	if err != nil {
		return admission.Decision{}, err
	}
	p.say("$ lockstep admit --manifest store-web.json --image web --running docker:web --probe http://%s/", probe)
	d := admission.Check(ctx, admission.Config{
		Source: manifest.FileSource{Path: p.manifestPath}, AllowUnsigned: true, Image: "web",
		Running: src, Platform: platform, Probes: []string{"http://" + probe + "/"}, Client: p.client,
		Timeout: 30 * time.Second,
	})
	p.render(d)
	return d, nil
}

func (p *play) render(d admission.Decision) {
	verdict := "ADMITTED"
	if !d.Allowed {
		verdict = "REFUSED (exit 1)"
		if d.Unverified {
			verdict = "REFUSED: could not verify (exit 3)"
		}
	}
	p.say("%s: running %s, %d assets served, %d CDN checks, %d requests in %s", verdict, d.RunningDigest, len(d.Served), d.CDNChecked, d.Requests, d.Duration.Round(time.Millisecond))
	for _, f := range d.Findings {
		if f.Severity == admission.Refuse {
			p.say("  %s: %s", f.Kind, f.Message)
		}
	}
}

// serve serves h on a listener until cleanup and returns its address.
func (p *play) serve(network, addr string, h http.Handler) (string, error) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	p.cleanups = append(p.cleanups, func() { srv.Close() })
	return l.Addr().String(), nil
}
