package scripts

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// nonrootBase pushes a stand-in for distroless static's nonroot variant
// (which this machine cannot reach) to reg: an index of linux/amd64 and
// linux/arm64 images with no layers at all (so no shell) whose config runs
// as 65532:65532, and returns its reference by digest.
func nonrootBase(t *testing.T, reg string) string {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
			OS: "linux", Architecture: arch,
			Config: v1.Config{User: "65532:65532", Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}},
			RootFS: v1.RootFS{Type: "layers"},
		})
		if err != nil {
			t.Fatal(err)
		}
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	ref, err := name.ParseReference(reg + "/distroless/static:nonroot")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatalf("pushing the base image: %v", err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref.Context().Digest(d.String()).String()
}

// koPlatforms are the platforms .ko.yaml builds (defaultPlatforms).
var koPlatforms = []string{"linux/amd64", "linux/arm64"}

// TestImage builds lockstep's image with ko and .ko.yaml, as the release
// workflow does, into the local docker-registry, then pulls it back by
// digest: non-root, no shell, the stamped binary. By default ko builds the
// host's platform alone (--platform), as the snapshot does: a second
// platform is another link of lockstep and another 30 MB layer to gzip;
// LOCKSTEP_TEST_RELEASE_ALL=1 (the full run, CI) builds every platform
// .ko.yaml names and checks each. Either way .ko.yaml must name both.
func TestImage(t *testing.T) {
	t.Parallel()
	if os.Getenv("LOCKSTEP_TEST_RELEASE") != "1" {
		t.Skip("builds the image with ko: scripts/test.sh runs it (LOCKSTEP_TEST_RELEASE=1)")
	}
	ko := testenv.Require(t, "ko")
	if p, err := filepath.Abs("../.cache/bin/ko"); err == nil && isExecutable(p) {
		ko = p
	}
	reg := testenv.Registry(t)
	base := nonrootBase(t, reg)

	// Stop ko before the test binary's own deadline, so that the cleanups
	// (the registry) still run.
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	// The units, as the release workflow lays them out for ko.
	if out, err := exec.CommandContext(ctx, "bash", "image-kodata.sh").CombinedOutput(); err != nil {
		t.Fatalf("image-kodata.sh: %v\n%s", err, out)
	}
	want := koPlatforms
	args := []string{"build", "--bare", "--sbom=none"}
	if os.Getenv("LOCKSTEP_TEST_RELEASE_ALL") != "1" {
		want = []string{"linux/" + runtime.GOARCH}
		args = append(args, "--platform="+want[0])
	}
	cmd := exec.CommandContext(ctx, ko, append(args, "./cmd/lockstep")...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "KO_DOCKER_REPO="+reg+"/lockstep", "KO_DEFAULTBASEIMAGE="+base, "VERSION=0.0.0-test",
		"GOFLAGS=-buildvcs=false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ko build: %v\n%s", err, stderr.String())
	}
	pushed := strings.TrimSpace(string(out))
	ref, err := name.NewDigest(pushed)
	if err != nil {
		t.Fatalf("ko build printed %q, want a reference by digest: %v", pushed, err)
	}

	// Several platforms are an index; ko pushes one platform as an image.
	got, err := remote.Get(ref)
	if err != nil {
		t.Fatalf("pulling %s back: %v", ref, err)
	}
	if got.Digest.String() != ref.DigestStr() {
		t.Errorf("the registry's manifest has digest %s, ko printed %s", got.Digest, ref.DigestStr())
	}
	type platformImage struct {
		platform *v1.Platform
		img      v1.Image
	}
	var images []platformImage
	switch {
	case got.MediaType.IsIndex():
		idx, err := got.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		for _, desc := range im.Manifests {
			img, err := idx.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			if desc.Platform == nil {
				t.Errorf("manifest %s has no platform", desc.Digest)
				continue
			}
			images = append(images, platformImage{desc.Platform, img})
		}
	case len(want) > 1:
		t.Fatalf("ko pushed a %s for %v, want an index", got.MediaType, want)
	default:
		img, err := got.Image()
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		images = append(images, platformImage{cf.Platform(), img})
	}
	var platforms []string
	for _, pi := range images {
		img := pi.img
		platforms = append(platforms, pi.platform.String())
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if u := cf.Config.User; u == "" || u == "0" || strings.HasPrefix(u, "0:") || u == "root" {
			t.Errorf("%s runs as user %q, want non-root", pi.platform, u)
		}
		if ep := cf.Config.Entrypoint; len(ep) != 1 || ep[0] != "/ko-app/lockstep" {
			t.Errorf("%s entrypoint %q, want the lockstep binary alone", pi.platform, ep)
		}
		files := imageFiles(t, img)
		for _, sh := range []string{"bin/sh", "bin/bash", "bin/busybox", "usr/bin/sh"} {
			if _, ok := files[sh]; ok {
				t.Errorf("%s has a shell, /%s", pi.platform, sh)
			}
		}
		bin, ok := files["ko-app/lockstep"]
		if !ok {
			t.Errorf("%s has no /ko-app/lockstep", pi.platform)
			continue
		}
		// The image's examples: deploy/systemd whole at /var/run/ko/systemd,
		// gating the ingress once installed as from the archive.
		if pi.platform.Architecture == runtime.GOARCH && runtime.GOOS == "linux" {
			dir := t.TempDir()
			for p, b := range files {
				if rel, ok := strings.CutPrefix(p, "var/run/ko/"); ok && b != nil {
					if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
						t.Fatal(err)
					}
					os.WriteFile(filepath.Join(dir, rel), b, 0o644)
				}
			}
			os.WriteFile(filepath.Join(dir, "lockstep"), bin, 0o755)
			root := installArchive(t, dir)
			carries(t, "the image", root, archiveWhere)
			gatesTheIngress(t, "the image", root)
		}
		if pi.platform.Architecture == runtime.GOARCH && runtime.GOOS == "linux" {
			path := filepath.Join(t.TempDir(), "lockstep")
			if err := os.WriteFile(path, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(path, "version", "--format", "json").Output()
			var v buildVersion
			if err != nil || json.Unmarshal(out, &v) != nil || v.Version != "0.0.0-test" || !v.Release {
				t.Errorf("the image's lockstep version = %s (%v), want the stamped release 0.0.0-test", out, err)
			}
		}
	}
	if got := strings.Join(platforms, ","); got != strings.Join(want, ",") {
		t.Errorf("platforms %s, want %s", got, strings.Join(want, ","))
	}
}

// TestKoPlatforms: .ko.yaml builds the image for every platform the
// release serves containers on, which TestImage builds by default for the
// host's alone.
func TestKoPlatforms(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../.ko.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ko struct {
		DefaultPlatforms []string `yaml:"defaultPlatforms"`
	}
	if err := yaml.Unmarshal(raw, &ko); err != nil {
		t.Fatalf(".ko.yaml: %v", err)
	}
	if !slices.Equal(ko.DefaultPlatforms, koPlatforms) {
		t.Errorf(".ko.yaml defaultPlatforms = %v, want %v", ko.DefaultPlatforms, koPlatforms)
	}
}

// imageFiles returns the regular files of img's flattened filesystem, by
// path without the leading slash: its layers in order, each decompressed by
// the system's gzip (see gunzip; ggcr's mutate.Extract would inflate them
// with compress/flate under the race detector, 10 s and more a platform),
// a later layer's file replacing an earlier one's and its whiteouts
// (.wh.NAME, .wh..wh..opq) removing them, as a container runtime does.
func imageFiles(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	remove := func(dir string, keep func(string) bool) {
		for p := range files {
			if (dir == "" || p == dir || strings.HasPrefix(p, dir+"/")) && !keep(p) {
				delete(files, p)
			}
		}
	}
	for _, l := range layers {
		mt, err := l.MediaType()
		if err != nil {
			t.Fatal(err)
		}
		if mt != types.OCILayer && mt != types.DockerLayer {
			t.Fatalf("a layer of media type %s: this test reads gzipped layers only", mt)
		}
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		d, _ := l.Digest()
		what := "layer " + d.String()
		added := map[string]bool{}
		gunzip(t, what, rc, func(r io.Reader) {
			walkTar(t, what, r, func(h *tar.Header, body []byte) bool {
				p := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
				dir, base := path.Split(p)
				dir = strings.TrimSuffix(dir, "/")
				switch {
				case base == ".wh..wh..opq": // the directory's earlier content is gone
					remove(dir, func(q string) bool { return added[q] || q == dir })
				case strings.HasPrefix(base, ".wh."):
					remove(path.Join(dir, strings.TrimPrefix(base, ".wh.")), func(string) bool { return false })
				default:
					files[p] = body
					added[p] = true
				}
				return true
			})
		})
		rc.Close()
	}
	return files
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
