// Package bootgate is the boot-gate part of `lockstep demo`: the Epic
// 2021 scenario end to end. Release v1 is recorded, signed, published to a
// file store and put on the CDN; a good instance is admitted; CI silently
// re-pushes the tag with a build that serves a new asset ID; a new
// instance booting during a scale-up is refused with image-digest-mismatch,
// asset-not-in-manifest and asset-missing-on-cdn.
//
// It needs a registry and a CDN (a directory some web server serves) and
// starts everything else itself, on loopback: each instance's app (an
// HTTP server serving its page), its Docker daemon (a Docker Engine API on
// a unix socket reporting what the instance pulled) and its trusted state
// ([Instances]). Every instance reads the release from the store and
// verifies its signature with the release's public key, as `lockstep
// admit --store URL --release NAME --key PUB` does.
package bootgate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/scenario"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// Env is what the demo runs against.
type Env struct {
	// Registry is a registry's host:port (plain http on loopback).
	Registry string
	// CDNDir is the directory the CDN serves at CDNBase.
	CDNDir, CDNBase string
	// WorkDir holds the key pair, the store, and the instances' sockets
	// and state; empty means a temporary directory, removed at the end.
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
	var cleanups []func()
	if p.env.WorkDir == "" {
		dir, err := os.MkdirTemp("", "lockstep-bootgate-")
		if err != nil {
			return nil, nil, err
		}
		p.env.WorkDir = dir
		cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	}
	p.instances = &Instances{
		Dir: p.env.WorkDir, Client: p.client,
		Command: func(args ...string) { p.say("$ lockstep %s", strings.Join(args, " ")) },
		Say:     p.say,
	}
	cleanups = append(cleanups, p.instances.Close)
	p.ref = env.Registry + "/store/web:v1"
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	return []Step{
		{"release v1 is built, pinned, recorded, signed, published and its assets put on the CDN", p.release},
		{"an instance of v1 boots and is admitted", p.goodInstance},
		{"CI silently re-pushes the v1 tag with a build that serves a new asset ID", p.repush},
		{"a new instance boots during a scale-up and is refused", p.newInstance},
	}, cleanup, nil
}

type play struct {
	env       Env
	client    *transport.Client
	ref       string
	trust     Trust
	served    []string
	newAsset  string
	instances *Instances
}

func (p *play) say(format string, args ...any) { fmt.Fprintf(p.env.Out, "   "+format+"\n", args...) }

func (p *play) release(ctx context.Context) error {
	if err := scenario.Push(ctx, p.ref, 1, p.client.Transport(), Platform); err != nil {
		return fmt.Errorf("pushing %s: %w", p.ref, err)
	}
	im, err := registry.Pin(ctx, "web", p.ref, registry.Options{Client: p.client})
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
	priv, pub, err := GenerateKey(p.env.WorkDir)
	if err != nil {
		return err
	}
	sign, err := SignFunc(ctx, priv)
	if err != nil {
		return err
	}
	sig, err := sign(ctx, raw)
	if err != nil {
		return err
	}
	signed, err := manifest.NewSigned(raw, "store-web.json")
	if err != nil {
		return err
	}
	signed.Signature = sig.Base64
	dir := filepath.Join(p.env.WorkDir, "store")
	st, err := filestore.New(dir)
	if err != nil {
		return err
	}
	ptr, err := store.Publish(ctx, st, signed, store.DefaultChannel, "demo")
	if err != nil {
		return err
	}
	p.trust = Trust{Store: st, StoreURL: "file://" + dir, Release: "store-web", KeyPath: pub}
	p.served = scenario.Paths(files)[:6]
	p.say("recorded %s: %d assets on %s, fingerprint %s", m.ID(), len(m.Assets.Files), base, m.Assets.Fingerprint)
	p.say("signed with %s; published to %s: %s generation %d", priv, p.trust.StoreURL, ptr.Channel, ptr.Generation)
	return nil
}

func (p *play) goodInstance(ctx context.Context) error {
	d, err := p.instances.Boot(ctx, p.ref, p.env.CDNBase, p.served, p.trust)
	if err != nil {
		return err
	}
	if !d.Allowed {
		return errors.New("the v1 instance was refused")
	}
	return nil
}

func (p *play) repush(ctx context.Context) error {
	if err := scenario.Push(ctx, p.ref, 2, p.client.Transport(), Platform); err != nil {
		return err
	}
	pulled, err := scenario.Pull(ctx, p.ref, Platform, p.client.Transport())
	if err != nil {
		return err
	}
	p.newAsset = NewAssetID
	p.say("%s now resolves to %s; the new build's page references %s, which nobody uploaded to the CDN", p.ref, strings.SplitN(pulled.RepoDigest, "@", 2)[1], p.newAsset)
	p.say("every dashboard still says \"v1\" everywhere")
	return nil
}

func (p *play) newInstance(ctx context.Context) error {
	d, err := p.instances.Boot(ctx, p.ref, p.env.CDNBase, append(slices.Clone(p.served), p.newAsset), p.trust)
	if err != nil {
		return err
	}
	if err := Refused(d); err != nil {
		return err
	}
	p.say("the instance never joins the fleet: with --lifecycle-hook, its lifecycle action is ABANDON and the group replaces it")
	return nil
}

// NewAssetBody is the asset the re-pushed build serves, and NewAssetID
// its content-addressed ID.
const NewAssetBody = "console.log('built again, by the re-push')"

// NewAssetID is the ID of NewAssetBody, which v1 never recorded.
var NewAssetID = scenario.ID("js/app.js", NewAssetBody)

// RefusalKinds are the findings the re-pushed instance must be refused
// with.
var RefusalKinds = []admission.Kind{admission.KindImageDigestMismatch, admission.KindAssetNotInManifest, admission.KindAssetMissingOnCDN}

// Refused returns an error unless d refuses the re-pushed instance with
// every one of RefusalKinds.
func Refused(d admission.Decision) error {
	if d.Allowed {
		return errors.New("the re-pushed instance was admitted")
	}
	for _, k := range RefusalKinds {
		if !d.Has(k) {
			return fmt.Errorf("the re-pushed instance was refused without %s", k)
		}
	}
	return nil
}
