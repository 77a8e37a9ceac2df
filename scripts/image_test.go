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
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

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

// TestImage builds lockstep's image with ko and .ko.yaml, as the release
// workflow does, into the local docker-registry, then pulls it back by
// digest: both platforms, non-root, no shell, the stamped binary.
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
	cmd := exec.CommandContext(ctx, ko, "build", "--bare", "--sbom=none", "./cmd/lockstep")
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

	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("pulling %s back as an index: %v", ref, err)
	}
	if d, _ := idx.Digest(); d.String() != ref.DigestStr() {
		t.Errorf("the registry's index has digest %s, ko printed %s", d, ref.DigestStr())
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, desc := range im.Manifests {
		if desc.Platform == nil {
			t.Errorf("manifest %s has no platform", desc.Digest)
			continue
		}
		platforms = append(platforms, desc.Platform.String())
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if u := cf.Config.User; u == "" || u == "0" || strings.HasPrefix(u, "0:") || u == "root" {
			t.Errorf("%s runs as user %q, want non-root", desc.Platform, u)
		}
		if ep := cf.Config.Entrypoint; len(ep) != 1 || ep[0] != "/ko-app/lockstep" {
			t.Errorf("%s entrypoint %q, want the lockstep binary alone", desc.Platform, ep)
		}
		files := imageFiles(t, img)
		for _, sh := range []string{"bin/sh", "bin/bash", "bin/busybox", "usr/bin/sh"} {
			if _, ok := files[sh]; ok {
				t.Errorf("%s has a shell, /%s", desc.Platform, sh)
			}
		}
		bin, ok := files["ko-app/lockstep"]
		if !ok {
			t.Errorf("%s has no /ko-app/lockstep", desc.Platform)
			continue
		}
		// The image's examples: deploy/systemd whole at /var/run/ko/systemd,
		// gating the ingress once installed as from the archive.
		if desc.Platform.Architecture == runtime.GOARCH && runtime.GOOS == "linux" {
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
		if desc.Platform.Architecture == runtime.GOARCH && runtime.GOOS == "linux" {
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
	if got := strings.Join(platforms, ","); got != "linux/amd64,linux/arm64" {
		t.Errorf("platforms %s, want linux/amd64,linux/arm64", got)
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
