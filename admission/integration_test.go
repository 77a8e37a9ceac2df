package admission_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// instance is a booting instance: an app (nginx serving its page) and a
// Docker daemon that runs what it pulled.
type instance struct {
	probe  string
	docker string
}

func bootInstance(t *testing.T, ctx context.Context, ref, platform, cdnBase string, ids []string) instance {
	t.Helper()
	pulled, err := scenario.Pull(ctx, ref, platform, nil)
	if err != nil {
		t.Fatalf("pulling %s: %v", ref, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(scenario.Page(cdnBase, ids)), 0o644); err != nil {
		t.Fatal(err)
	}
	app := testenv.Nginx(t, dir)
	host, _ := runningtest.Docker(t, runningtest.Container{
		ID: "4f6c0d0e9a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5", Name: "web", Reference: ref,
		ImageID: pulled.ImageID, RepoDigests: []string{pulled.RepoDigest}, OS: pulled.OS, Arch: pulled.Arch,
	})
	return instance{probe: app + "/", docker: host}
}

func (in instance) config(t *testing.T, manifestPath, platform string) admission.Config {
	t.Helper()
	src, err := running.Parse("docker:web", running.Options{DockerHost: in.docker})
	if err != nil {
		t.Fatal(err)
	}
	return admission.Config{
		CDN:    cdngate.Checker{},
		Source: manifest.FileSource{Path: manifestPath}, AllowUnsigned: true,
		Image: "web", Running: src, Platform: platform, Probes: []string{in.probe},
		Client: transport.New(transport.DefaultPolicy()),
	}
}

// TestEpic plays the 2021 outage: a tag silently re-pushed, a new instance
// serving an asset ID the CDN does not have.
func TestEpic(t *testing.T) {
	ctx := context.Background()
	reg := testenv.Registry(t)
	ref := reg + "/store/web:v1"
	const platform = "linux/amd64"
	if err := scenario.Push(ctx, ref, 1, nil, platform); err != nil {
		t.Fatalf("pushing v1: %v", err)
	}
	im, err := registry.Pin(ctx, "web", ref, registry.Options{})
	if err != nil {
		t.Fatalf("pinning v1: %v", err)
	}
	v1 := scenario.Assets("v1", 8)
	cdnDir := t.TempDir()
	if err := scenario.WriteFiles(cdnDir, v1); err != nil {
		t.Fatal(err)
	}
	cdn := testenv.Nginx(t, cdnDir) + "/"
	_, raw, err := scenario.Manifest("store-web", 1, []manifest.Image{*im}, []string{cdn}, v1)
	if err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(t.TempDir(), "release.json")
	if err := os.WriteFile(mpath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	served := scenario.Paths(v1)[:5]

	old := bootInstance(t, ctx, ref, platform, cdn, served)
	d := admission.Check(ctx, old.config(t, mpath, platform))
	if !d.Allowed {
		t.Fatalf("the v1 instance was refused:\n%s", dump(d))
	}
	if d.Match != "config" || len(d.Served) != 5 || d.CDNChecked != 5 {
		t.Errorf("v1 instance: Match %q, Served %q, CDNChecked %d", d.Match, d.Served, d.CDNChecked)
	}

	// CI silently re-pushes the tag with a build that serves a new asset.
	if err := scenario.Push(ctx, ref, 2, nil, platform); err != nil {
		t.Fatalf("re-pushing v1: %v", err)
	}
	newAsset := scenario.ID("js/app.js", "console.log('the re-pushed build')")
	fresh := bootInstance(t, ctx, ref, platform, cdn, append(slices.Clone(served), newAsset))
	d = admission.Check(ctx, fresh.config(t, mpath, platform))
	if d.Allowed || d.Unverified {
		t.Fatalf("the re-pushed instance: Allowed %v, Unverified %v; want a refusal (exit 1):\n%s", d.Allowed, d.Unverified, dump(d))
	}
	t.Logf("the re-pushed instance:\n%s", dump(d))
	for _, k := range []admission.Kind{admission.KindImageDigestMismatch, admission.KindAssetNotInManifest, admission.KindAssetMissingOnCDN} {
		if !d.Has(k) {
			t.Errorf("the re-pushed instance has no %s finding:\n%s", k, dump(d))
		}
	}
	for _, f := range d.Findings {
		if (f.Kind == admission.KindAssetNotInManifest || f.Kind == admission.KindAssetMissingOnCDN) && f.Subject != newAsset {
			t.Errorf("%s names %s, want only the new asset %s", f.Kind, f.Subject, newAsset)
		}
	}

	// The old instance still runs the release.
	if d := admission.Check(ctx, old.config(t, mpath, platform)); !d.Allowed {
		t.Errorf("the v1 instance is refused after the re-push:\n%s", dump(d))
	}
}

// TestMultiArch checks an index with amd64 and arm64: each platform's
// image is admitted on its own platform only.
func TestMultiArch(t *testing.T) {
	ctx := context.Background()
	reg := testenv.Registry(t)
	ref := reg + "/store/web:v2"
	if err := scenario.Push(ctx, ref, 7, nil, "linux/amd64", "linux/arm64"); err != nil {
		t.Fatalf("pushing the index: %v", err)
	}
	im, err := registry.Pin(ctx, "web", ref, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Platforms) != 2 {
		t.Fatalf("pinned %d platforms, want 2", len(im.Platforms))
	}
	files := scenario.Assets("v2", 2)
	cdnDir := t.TempDir()
	if err := scenario.WriteFiles(cdnDir, files); err != nil {
		t.Fatal(err)
	}
	cdn := testenv.Nginx(t, cdnDir) + "/"
	_, raw, err := scenario.Manifest("store-web", 2, []manifest.Image{*im}, []string{cdn}, files)
	if err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(t.TempDir(), "release.json")
	if err := os.WriteFile(mpath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pulled, gate string
		allowed      bool
	}{
		{"linux/amd64", "linux/amd64", true},
		{"linux/arm64", "linux/arm64", true},
		{"linux/arm64", "linux/amd64", false},
		{"linux/amd64", "linux/arm64", false},
	} {
		in := bootInstance(t, ctx, ref, tt.pulled, cdn, scenario.Paths(files))
		d := admission.Check(ctx, in.config(t, mpath, tt.gate))
		if d.Allowed != tt.allowed {
			t.Errorf("the %s image on a %s gate: Allowed = %v, want %v\n%s", tt.pulled, tt.gate, d.Allowed, tt.allowed, dump(d))
		}
		if !tt.allowed && !d.Has(admission.KindImageDigestMismatch) {
			t.Errorf("the %s image on a %s gate: no image-digest-mismatch:\n%s", tt.pulled, tt.gate, dump(d))
		}
		// By its repo digest alone (the index), any platform matches: the
		// image ID is what tells the platform apart.
		byIndex := in.config(t, mpath, tt.gate)
		pulled, _ := scenario.Pull(ctx, ref, tt.pulled, nil)
		byIndex.Running = running.Given{Value: pulled.ImageID}
		if d := admission.Check(ctx, byIndex); d.Allowed != tt.allowed {
			t.Errorf("digest:%s on a %s gate: Allowed = %v, want %v", pulled.ImageID, tt.gate, d.Allowed, tt.allowed)
		}
	}
}
