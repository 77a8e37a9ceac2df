package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/lockstep-dev/lockstep/internal/demo/bootgate"
	"github.com/lockstep-dev/lockstep/internal/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/record"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/cdn"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// rel names a file of the demo as the narrative prints it: relative to
// the demo's directory, where the user would run the commands.
func (e *Env) rel(path string) string {
	if r, err := filepath.Rel(e.Dir, path); err == nil {
		return r
	}
	return path
}

func pushRelease(ctx context.Context, e *Env) error {
	if err := scenario.Push(ctx, e.ImageRef, 1, e.Client.Transport(), bootgate.Platform); err != nil {
		return fmt.Errorf("pushing %s: %w", e.ImageRef, err)
	}
	ids, err := writeBuild(e.BuildDir, "v1")
	if err != nil {
		return err
	}
	e.Served = ids
	n, err := upload(e.BuildDir, e.CDNDir)
	if err != nil {
		return err
	}
	e.Say("CI pushed %s (%s) and uploaded %d files of %s/ to the CDN", e.ImageRef, bootgate.Platform, n, e.rel(e.BuildDir))
	return nil
}

func pinImage(ctx context.Context, e *Env) error {
	e.Command("pin", e.ImageRef)
	im, err := registry.Pin(ctx, "web", e.ImageRef, registry.Options{Client: e.Client})
	if err != nil {
		return err
	}
	e.Say("%s", registry.Pinned(*im))
	for _, p := range im.Platforms {
		e.Say("  %s manifest %s config %s", p, p.Digest, p.Config)
	}
	return nil
}

func makeKey(ctx context.Context, e *Env) error {
	priv, pub, err := bootgate.GenerateKey(e.Dir)
	if err != nil {
		return err
	}
	e.Key, e.PublicKey = priv, pub
	fmt.Fprintf(e.Out, "  $ cosign generate-key-pair\n")
	e.Say("(here the demo made a new ECDSA P-256 key pair, cosign's default kind)")
	e.Say("wrote %s (kept secret by CI) and %s (given to every instance)", e.rel(priv), e.rel(pub))
	return nil
}

// recordRelease runs `lockstep record --generation auto --store URL
// --check-cdn --sign-key KEY --output PATH` for the build as it is now, and
// prints what it said.
func recordRelease(ctx context.Context, e *Env, path string) (*record.Result, error) {
	e.Command("record", "--release", e.Release, "--generation", "auto", "--store", e.StoreURL,
		"--image", "web="+e.ImageRef, "--assets", e.rel(e.BuildDir)+"/", "--cdn", e.CDN,
		"--check-cdn", "--sign-key", e.rel(e.Key), "--output", e.rel(path))
	gen, err := store.NextGeneration(ctx, e.Store, e.Release, store.DefaultChannel)
	if err != nil {
		return nil, err
	}
	sign, err := bootgate.SignFunc(ctx, e.Key)
	if err != nil {
		return nil, err
	}
	res, err := record.Record(ctx, record.Options{
		Release:    e.Release,
		Generation: gen,
		Images:     []record.Image{{Name: "web", Ref: e.ImageRef}},
		Assets:     assets.Options{Dir: e.BuildDir},
		CDN:        []string{e.CDN},
		Registry:   registry.Options{Client: e.Client},
	}, record.Output{Path: path, CheckCDN: &cdn.Options{Client: e.Client}, Sign: sign})
	if res != nil && res.CDN != nil {
		var b bytes.Buffer
		if err := res.CDN.Write(&b, "text", "demo"); err != nil {
			return nil, err
		}
		e.Say("%s", bytes.TrimRight(b.Bytes(), "\n"))
	}
	return res, err
}

func recordV1(ctx context.Context, e *Env) error {
	path := filepath.Join(e.Dir, "release-v1.json")
	res, err := recordRelease(ctx, e, path)
	if err != nil {
		return err
	}
	m := res.Manifest
	if m.Release.Generation != 1 {
		return fmt.Errorf("--generation auto on an empty store gave generation %d, want 1", m.Release.Generation)
	}
	e.Manifest, e.ManifestPath = m, path
	e.Say("%s", res.Digest)
	e.Say("release %s: image web %s, %d assets (%d bytes), fingerprint %s", m.ID(), m.Images[0].Digest,
		len(m.Assets.Files), manifest.Bytes(m.Assets.Files), m.Assets.Fingerprint)
	e.Say("signed: %s", e.rel(res.Signature))
	return nil
}

func verifyManifest(ctx context.Context, e *Env) error {
	e.Command("manifest", "verify", "--key", e.rel(e.PublicKey), e.rel(e.ManifestPath))
	key, err := signature.LoadVerifier(ctx, e.PublicKey)
	if err != nil {
		return err
	}
	v, err := signature.NewVerifier(signature.Options{Key: key})
	if err != nil {
		return err
	}
	s, err := signature.VerifyFile(ctx, v, e.ManifestPath, "", "")
	if err != nil {
		return err
	}
	e.Say("%s: %s %s, signed by %s", e.rel(e.ManifestPath), s.Manifest.ID(), s.Digest, signature.Fingerprint(key))
	return nil
}

// publish runs `lockstep publish --store URL PATH`.
func publish(ctx context.Context, e *Env, path string) (*manifest.Pointer, error) {
	e.Command("publish", "--store", e.StoreURL, e.rel(path))
	s, err := manifest.FileSource{Path: path}.Fetch(ctx)
	if err != nil {
		return nil, err
	}
	return store.Publish(ctx, e.Store, s, store.DefaultChannel, "demo")
}

func publishV1(ctx context.Context, e *Env) error {
	p, err := publish(ctx, e, e.ManifestPath)
	if err != nil {
		return err
	}
	e.Say("%s %s generation %d %s", p.Release, p.Channel, p.Generation, p.Digest)
	return nil
}

func admitGood(ctx context.Context, e *Env) error {
	d, err := e.Instances.Boot(ctx, e.ImageRef, e.CDN, e.Served, e.Trust())
	if err != nil {
		return err
	}
	if !d.Allowed {
		return errors.New("the v1 instance was refused")
	}
	return nil
}

func repush(ctx context.Context, e *Env) error {
	before := e.Manifest.Images[0].Digest
	if err := scenario.Push(ctx, e.ImageRef, 2, e.Client.Transport(), bootgate.Platform); err != nil {
		return err
	}
	pulled, err := scenario.Pull(ctx, e.ImageRef, bootgate.Platform, e.Client.Transport())
	if err != nil {
		return err
	}
	if pulled.RepoDigest == e.Manifest.Images[0].Repository+"@"+before.String() {
		return fmt.Errorf("the re-push left %s at %s", e.ImageRef, before)
	}
	if err := os.MkdirAll(filepath.Join(e.BuildDir, "js"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(e.BuildDir, filepath.FromSlash(bootgate.NewAssetID)), []byte(bootgate.NewAssetBody), 0o644); err != nil {
		return err
	}
	e.Say("a pipeline re-pushed %s: it now names %s", e.ImageRef, pulled.RepoDigest)
	e.Say("its page references %s, which nobody uploaded to the CDN", bootgate.NewAssetID)
	e.Say("(release v1 pinned %s; the tag, every label and every dashboard look the same)", before)
	return nil
}

func refuseMovedTag(ctx context.Context, e *Env) error {
	e.Command("pin", "--previous", e.rel(e.ManifestPath), "web="+e.ImageRef)
	_, err := registry.Resolve(ctx, []registry.Request{{Name: "web", Ref: e.ImageRef}},
		registry.Options{Client: e.Client, Previous: e.Manifest})
	if err == nil {
		return fmt.Errorf("the moved tag %s was not refused", e.ImageRef)
	}
	if !registry.IsMovedTag(err) {
		return fmt.Errorf("want a moved-tag refusal, got: %w", err)
	}
	return e.Refused(err, 1)
}

func refuseNewInstance(ctx context.Context, e *Env) error {
	d, err := e.Instances.Boot(ctx, e.ImageRef, e.CDN, append(slices.Clone(e.Served), bootgate.NewAssetID), e.Trust())
	if err != nil {
		return err
	}
	if err := bootgate.Refused(d); err != nil {
		return err
	}
	e.Say("the instance never joins the fleet: with --lifecycle-hook, its lifecycle action is ABANDON and the group replaces it")
	return nil
}

func refuseV2OffCDN(ctx context.Context, e *Env) error {
	path := filepath.Join(e.Dir, "release-v2.json")
	_, err := recordRelease(ctx, e, path)
	if err == nil {
		return errors.New("record --check-cdn wrote a release whose asset is not on the CDN")
	}
	if !verdict.IsMismatch(err) {
		return fmt.Errorf("want a refusal, got: %w", err)
	}
	if _, serr := os.Stat(path); !errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("the refused record left %s (%v)", e.rel(path), serr)
	}
	return e.Refused(err, 1)
}

func publishV2(ctx context.Context, e *Env) error {
	n, err := upload(e.BuildDir, e.CDNDir)
	if err != nil {
		return err
	}
	e.Say("CI uploaded %d files of %s/ to the CDN, %s among them", n, e.rel(e.BuildDir), bootgate.NewAssetID)
	path := filepath.Join(e.Dir, "release-v2.json")
	res, err := recordRelease(ctx, e, path)
	if err != nil {
		return err
	}
	if g := res.Manifest.Release.Generation; g != 2 {
		return fmt.Errorf("--generation auto after generation 1 gave %d, want 2", g)
	}
	e.Say("%s", res.Digest)
	p, err := publish(ctx, e, path)
	if err != nil {
		return err
	}
	e.Say("%s %s generation %d %s", p.Release, p.Channel, p.Generation, p.Digest)
	return nil
}

func admitV2(ctx context.Context, e *Env) error {
	d, err := e.Instances.Boot(ctx, e.ImageRef, e.CDN, append(slices.Clone(e.Served), bootgate.NewAssetID), e.Trust())
	if err != nil {
		return err
	}
	if !d.Allowed || d.Generation != 2 {
		return fmt.Errorf("the instance of v2 was not admitted against generation 2 (allowed %v, generation %d)", d.Allowed, d.Generation)
	}
	return nil
}

func refuseStalePublisher(ctx context.Context, e *Env) error {
	_, err := publish(ctx, e, e.ManifestPath)
	if err == nil {
		return errors.New("publishing generation 1 over generation 2 was not refused")
	}
	var ge *manifest.GenerationError
	if !errors.As(err, &ge) {
		return fmt.Errorf("want a generation refusal, got: %w", err)
	}
	if err := e.Refused(err, 1); err != nil {
		return err
	}
	e.Command("status", "--store", e.StoreURL, "--release", e.Release)
	p, err := e.Store.Channel(ctx, e.Release, store.DefaultChannel)
	if err != nil {
		return err
	}
	if p.Generation != 2 {
		return fmt.Errorf("the channel names generation %d after the stale publish, want 2", p.Generation)
	}
	e.Say("%s %s generation %d %s", p.Release, p.Channel, p.Generation, p.Digest)
	return nil
}

// writeBuild generates a small web build under dir: content-hashed script
// and style names, as a bundler writes them, and an index.html that
// references them. It returns the asset IDs the page references.
func writeBuild(dir, version string) ([]string, error) {
	js := []byte("document.title = 'store " + version + "';\n")
	css := []byte("body { font-family: sans-serif } /* " + version + " */\n")
	name := func(base, ext string, b []byte) string {
		sum := sha256.Sum256(b)
		return "assets/" + base + "-" + hex.EncodeToString(sum[:4]) + ext
	}
	jsName, cssName := name("app", ".js", js), name("app", ".css", css)
	ids := []string{cssName, jsName, "logo.svg"}
	files := map[string]string{
		jsName:       string(js),
		cssName:      string(css),
		"logo.svg":   `<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`,
		"index.html": scenario.Page("/", ids),
	}
	return ids, scenario.WriteFiles(dir, files)
}

// upload copies every file under src to dst, as a CDN sync does, and
// returns how many it copied.
func upload(src, dst string) (int, error) {
	n := 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		n++
		return os.WriteFile(to, b, 0o644)
	})
	return n, err
}
