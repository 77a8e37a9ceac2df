package demo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/internal/demo/bootgate"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

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
	e.Say("CI pushed %s (%s) and uploaded %d files of %s/ to the CDN", e.ImageRef, bootgate.Platform, n, e.BuildDir)
	return nil
}

// pinCache is pin's --cache: in the demo's directory, not the user's.
func (e *Env) pinCache() string { return filepath.Join(e.Dir, "pin-cache") }

func pinImage(ctx context.Context, e *Env) error {
	r := e.Lockstep(ctx, "pin", "--cache", e.pinCache(), e.ImageRef)
	return r.Expect(0, e.ImageRef+"@sha256:")
}

func makeKey(ctx context.Context, e *Env) error {
	prefix := filepath.Join(e.Dir, "cosign")
	r := e.Lockstep(ctx, "keygen", "--output-key-prefix", prefix)
	e.Key, e.PublicKey = prefix+".key", prefix+".pub"
	if err := r.Expect(0); err != nil {
		return err
	}
	if r.Stdout != e.Key+"\n"+e.PublicKey+"\n" {
		return fmt.Errorf("keygen wrote %q, want the pair %s and %s", r.Stdout, e.Key, e.PublicKey)
	}
	e.Say("%s is kept secret by CI (with its password); %s is given to every instance", filepath.Base(e.Key), filepath.Base(e.PublicKey))
	return nil
}

// recordRelease runs `lockstep record --generation auto --store URL
// --check-cdn --sign-key KEY --output PATH` for the build as it is now.
func recordRelease(ctx context.Context, e *Env, path string) Ran {
	return e.Lockstep(ctx, "record", "--release", e.Release, "--generation", "auto", "--store", e.StoreURL,
		"--image", "web="+e.ImageRef, "--assets", e.BuildDir+"/", "--cdn", e.CDN,
		"--check-cdn", "--sign-key", e.Key, "--output", path)
}

// recorded reads the manifest record wrote to path, and checks that record
// said its digest and signed it with the release key.
func recorded(ctx context.Context, e *Env, r Ran, path string, generation int64) (*manifest.Manifest, error) {
	if err := r.Expect(0); err != nil {
		return nil, err
	}
	m, _, err := manifest.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := m.Digest()
	if err != nil {
		return nil, err
	}
	if m.Release.Generation != generation {
		return nil, fmt.Errorf("--generation auto gave generation %d, want %d", m.Release.Generation, generation)
	}
	if !strings.Contains(r.Stdout, d.String()) {
		return nil, fmt.Errorf("record did not say the digest %s of %s", d, path)
	}
	key, err := signature.LoadVerifier(ctx, e.PublicKey)
	if err != nil {
		return nil, err
	}
	v, err := signature.NewVerifier(signature.Options{Key: key})
	if err != nil {
		return nil, err
	}
	if _, err := signature.VerifyFile(ctx, v, path, "", ""); err != nil {
		return nil, fmt.Errorf("the recorded %s does not verify with %s: %w", path, e.PublicKey, err)
	}
	return m, nil
}

func recordV1(ctx context.Context, e *Env) error {
	path := filepath.Join(e.Dir, "release-v1.json")
	m, err := recorded(ctx, e, recordRelease(ctx, e, path), path, 1)
	if err != nil {
		return err
	}
	e.Manifest, e.ManifestPath = m, path
	return nil
}

func verifyManifest(ctx context.Context, e *Env) error {
	return e.Lockstep(ctx, "manifest", "verify", "--key", e.PublicKey, e.ManifestPath).Expect(0)
}

// publish runs `lockstep publish --store URL PATH`.
func publish(ctx context.Context, e *Env, path string) Ran {
	return e.Lockstep(ctx, "publish", "--store", e.StoreURL, path)
}

// channel is the generation the store's production channel names now.
func channel(ctx context.Context, e *Env) (int64, error) {
	p, err := e.Store.Channel(ctx, e.Release, store.DefaultChannel)
	if err != nil {
		return 0, err
	}
	return p.Generation, nil
}

func publishV1(ctx context.Context, e *Env) error {
	if err := publish(ctx, e, e.ManifestPath).Expect(0); err != nil {
		return err
	}
	if g, err := channel(ctx, e); err != nil || g != 1 {
		return fmt.Errorf("after publishing, the channel names generation %d (%v), want 1", g, err)
	}
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
	r := e.Lockstep(ctx, "pin", "--cache", e.pinCache(), "--previous", e.ManifestPath, "web="+e.ImageRef)
	if r.Code == 0 {
		return fmt.Errorf("the moved tag %s was not refused", e.ImageRef)
	}
	if err := r.Expect(1, "moved tag", "moved from "+e.Manifest.Images[0].Digest.String()); err != nil {
		return fmt.Errorf("want a moved-tag refusal: %w", err)
	}
	return nil
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
	r := recordRelease(ctx, e, path)
	if r.Code == 0 {
		return errors.New("record --check-cdn wrote a release whose asset is not on the CDN")
	}
	if err := r.Expect(1, "missing", bootgate.NewAssetID); err != nil {
		return fmt.Errorf("want a refusal naming %s: %w", bootgate.NewAssetID, err)
	}
	for _, p := range []string{path, path + ".sig"} {
		if _, serr := os.Stat(p); !errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("the refused record left %s (%v)", p, serr)
		}
	}
	return nil
}

func publishV2(ctx context.Context, e *Env) error {
	n, err := upload(e.BuildDir, e.CDNDir)
	if err != nil {
		return err
	}
	e.Say("CI uploaded %d files of %s/ to the CDN, %s among them", n, e.BuildDir, bootgate.NewAssetID)
	path := filepath.Join(e.Dir, "release-v2.json")
	if _, err := recorded(ctx, e, recordRelease(ctx, e, path), path, 2); err != nil {
		return err
	}
	if err := publish(ctx, e, path).Expect(0); err != nil {
		return err
	}
	if g, err := channel(ctx, e); err != nil || g != 2 {
		return fmt.Errorf("after publishing v2, the channel names generation %d (%v), want 2", g, err)
	}
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
	r := publish(ctx, e, e.ManifestPath)
	if r.Code == 0 {
		return errors.New("publishing generation 1 over generation 2 was not refused")
	}
	if err := r.Expect(1, "generation 1 is not newer than generation 2"); err != nil {
		return fmt.Errorf("want a generation refusal: %w", err)
	}
	if err := e.Lockstep(ctx, "status", "--store", e.StoreURL, "--release", e.Release).Expect(0); err != nil {
		return err
	}
	if g, err := channel(ctx, e); err != nil || g != 2 {
		return fmt.Errorf("the channel names generation %d after the stale publish (%v), want 2", g, err)
	}
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
