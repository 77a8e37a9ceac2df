package demo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/memregistry"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/record"
	"github.com/lockstep-dev/lockstep/verify"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// registryOptions are the demo's pinning options: registry.Pin's
// defaults (the shared transport, Docker's keychain).
func registryOptions() registry.Options { return registry.Options{} }

// push pushes a new random image under e.ImageRef and returns its digest.
func push(e *Env) (string, error) {
	img, err := memregistry.PushImage(e.ImageRef, 4096)
	if err != nil {
		return "", err
	}
	d, err := img.Digest()
	return d.String(), err
}

func pushImage(ctx context.Context, e *Env) error {
	d, err := push(e)
	if err != nil {
		return err
	}
	e.Say("CI pushed %s: %s", e.ImageRef, d)
	return nil
}

func pinImage(ctx context.Context, e *Env) error {
	e.Command("pin", e.ImageRef)
	im, err := registry.Pin(ctx, "web", e.ImageRef, registryOptions())
	if err != nil {
		return err
	}
	e.Say("%s:%s@%s", im.Repository, im.Tag, im.Digest)
	for _, p := range im.Platforms {
		e.Say("  %s manifest %s config %s", p, p.Digest, p.Config)
	}
	return nil
}

func recordRelease(ctx context.Context, e *Env) error {
	e.ManifestPath = filepath.Join(e.Dir, "release-v1.json")
	e.Command("record", "--release", e.Release, "--generation", "1", "--image", "web="+e.ImageRef,
		"--assets", e.AssetDir, "--cdn", e.CDN, "--output", e.ManifestPath)
	m, err := record.Manifest(ctx, record.Options{
		Release:    e.Release,
		Generation: 1,
		Images:     []record.Image{{Name: "web", Ref: e.ImageRef}},
		Assets:     assets.Options{Dir: e.AssetDir},
		CDN:        []string{e.CDN},
		Registry:   registryOptions(),
	})
	if err != nil {
		return err
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(e.ManifestPath, b, 0o644); err != nil {
		return err
	}
	e.Manifest = m
	e.Say("%s", manifest.SHA256(b))
	e.Say("release %s: image web %s, %d assets (%d bytes), fingerprint %s",
		m.ID(), m.Images[0].Digest, len(m.Assets.Files), manifest.Bytes(m.Assets.Files), m.Assets.Fingerprint)
	for _, f := range m.Assets.Files {
		e.Say("  %s %s", f.SHA256[:12], f.Path)
	}
	return nil
}

func validateManifest(ctx context.Context, e *Env) error {
	e.Command("manifest", "validate", e.ManifestPath)
	m, _, err := manifest.ReadFile(e.ManifestPath)
	if err != nil {
		return err
	}
	d, err := m.Digest()
	if err != nil {
		return err
	}
	e.Say("%s: valid: %s, %s", e.ManifestPath, m.ID(), d)
	return nil
}

func repushImage(ctx context.Context, e *Env) error {
	before := e.Manifest.Images[0].Digest
	d, err := push(e)
	if err != nil {
		return err
	}
	if d == before.String() {
		return fmt.Errorf("the re-push gave the same digest %s", d)
	}
	e.Say("a pipeline re-pushed %s: it now names %s", e.ImageRef, d)
	e.Say("(release v1 pinned %s; the tag, every label and every dashboard look the same)", before)
	return nil
}

func refuseMovedTag(ctx context.Context, e *Env) error {
	e.Command("pin", "--previous", e.ManifestPath, e.ImageRef)
	err := e.pinPrevious(ctx, e.Manifest)
	if err == nil {
		return fmt.Errorf("the moved tag %s was not refused", e.ImageRef)
	}
	if !verify.IsMismatch(err) {
		return fmt.Errorf("want a refusal, got: %w", err)
	}
	return e.Refused(err, 1)
}

// movedTags re-pins every image of prev by its reference and returns, for
// each tag that now names another digest, a *verify.MismatchError (joined):
// what `lockstep pin --previous` refuses.
func movedTags(ctx context.Context, prev *manifest.Manifest, opts registry.Options) error {
	now := *prev
	now.Images = nil
	now.Release.Generation++
	for _, im := range prev.Images {
		p, err := registry.Pin(ctx, im.Name, im.Ref, opts)
		if err != nil {
			return err
		}
		now.Images = append(now.Images, *p)
	}
	var errs []error
	for _, ic := range manifest.Diff(prev, &now).Images {
		if ic.TagMoved {
			errs = append(errs, &verify.MismatchError{Subject: "image " + ic.Name, Reason: "tag " + ic.NewRef + " moved",
				Got: ic.NewDigest.String(), Want: ic.OldDigest.String()})
		}
	}
	return errors.Join(errs...)
}

// writeAssets generates a small web build under dir/cdn: content-hashed
// script and style names, as a bundler writes them, and an index.html that
// references them. It returns the directory.
func writeAssets(dir, version string) (string, error) {
	root := filepath.Join(dir, "cdn")
	js := []byte("document.title = 'store " + version + "';\n")
	css := []byte("body { font-family: sans-serif } /* " + version + " */\n")
	name := func(base, ext string, b []byte) string {
		sum := sha256.Sum256(b)
		return "assets/" + base + "-" + hex.EncodeToString(sum[:4]) + ext
	}
	jsName, cssName := name("app", ".js", js), name("app", ".css", css)
	files := map[string][]byte{
		jsName:     js,
		cssName:    css,
		"logo.svg": []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`),
		"index.html": []byte(`<!doctype html><html><head><link rel="stylesheet" href="/` + cssName + `">` +
			`<script type="module" src="/` + jsName + `"></script></head><body><img src="/logo.svg"></body></html>` + "\n"),
	}
	for p, b := range files {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(abs, b, 0o644); err != nil {
			return "", err
		}
	}
	return root, nil
}
