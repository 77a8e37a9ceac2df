package running_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest/crifake"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// pushed is what the test registry holds: an index of a runnable image
// for this host's architecture and another platform's image.
type pushed struct {
	ref                    string // REG/web:v1
	index                  v1.Hash
	manifest, config       v1.Hash // this host's platform
	otherManifest, otherCf v1.Hash
	other                  string // the other platform, os/arch
	otherDesc              ocispec.Descriptor
}

// sleeperLayer builds testdata/sleeper for this host as a static binary
// and returns a layer holding it as /sleep (and, to tell layers apart,
// /platform holding tag).
func sleeperLayer(t *testing.T, bin []byte, tag string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"sleep", 0o755, bin}, {"platform", 0o644, []byte(tag)}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pushImages pushes REG/web:v1 (an index of this host's linux image and
// another architecture's) and REG/pause:1 (the CRI sandbox image: the
// same host image by itself).
func pushImages(t *testing.T, reg string) pushed {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sleep")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/sleeper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the sleeper: %v\n%s", err, b)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	otherArch := "arm64"
	if runtime.GOARCH == "arm64" {
		otherArch = "amd64"
	}
	image := func(arch string) v1.Image {
		img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: arch,
			Config: v1.Config{Entrypoint: []string{"/sleep"}}, RootFS: v1.RootFS{Type: "layers"}})
		if err != nil {
			t.Fatal(err)
		}
		img, err = mutate.AppendLayers(img, sleeperLayer(t, bin, arch))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	host, other := image(runtime.GOARCH), image(otherArch)
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: host, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: runtime.GOARCH}}},
		mutate.IndexAddendum{Add: other, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: otherArch}}},
	), types.OCIImageIndex)
	p := pushed{ref: reg + "/web:v1", other: "linux/" + otherArch}
	ref, err := name.ParseReference(p.ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatalf("pushing %s: %v", p.ref, err)
	}
	// Another image than web's (whose config CRI would report under both
	// names).
	sandbox, err := mutate.Config(host, v1.Config{Entrypoint: []string{"/sleep"}, Labels: map[string]string{"role": "sandbox"}})
	if err != nil {
		t.Fatal(err)
	}
	pause, _ := name.ParseReference(reg + "/pause:1")
	if err := remote.Write(pause, sandbox); err != nil {
		t.Fatalf("pushing the sandbox image: %v", err)
	}
	must := func(h v1.Hash, err error) v1.Hash {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	p.index, p.manifest, p.config = must(idx.Digest()), must(host.Digest()), must(host.ConfigName())
	p.otherManifest, p.otherCf = must(other.Digest()), must(other.ConfigName())
	mt, err := other.MediaType()
	if err != nil {
		t.Fatal(err)
	}
	size, err := other.Size()
	if err != nil {
		t.Fatal(err)
	}
	p.otherDesc = ocispec.Descriptor{MediaType: string(mt), Digest: digest.Digest(p.otherManifest.String()), Size: size}
	return p
}

// runtimesEnv is what scripts/runtimes.sh started.
type runtimesEnv struct {
	containerd, cri, docker string
}

// startRuntimes starts containerd (with CRI) and dockerd, pulling from
// reg, for the life of the test (testenv.StartRuntimes).
func startRuntimes(t *testing.T, reg string) runtimesEnv {
	t.Helper()
	rt := testenv.StartRuntimes(t, reg, "the recorded answers of real daemons: TestRecordedContainerd, TestRecordedCRI and "+
		"TestRecordedDocker (admission/running/testdata: containerd 1.6, its CRI, dockerd 20.10)")
	return runtimesEnv{containerd: rt.Containerd, cri: rt.CRI, docker: rt.Docker}
}

// TestRealRuntimes pulls an image from the test registry into the real
// containerd, its CRI plugin and dockerd, creates and starts a container
// from it, and checks that each source reports the digests that were
// pushed: the config digest of this host's platform as the image ID, the
// index digest (and, for containerd, the platform manifest's) as repo
// digests, and this host's platform.
func TestRealRuntimes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the runtimes run on linux only")
	}
	reg := testenv.Registry(t)
	p := pushImages(t, reg)
	env := startRuntimes(t, reg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	platform := "linux/" + runtime.GOARCH

	t.Run("containerd", func(t *testing.T) {
		client, err := containerd.New(env.containerd)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		ctx := namespaces.WithNamespace(ctx, "lockstep")
		resolver := docker.NewResolver(docker.ResolverOptions{Hosts: docker.ConfigureDefaultRegistries(docker.WithPlainHTTP(docker.MatchAllHosts))})
		img, err := client.Pull(ctx, p.ref, containerd.WithPullUnpack, containerd.WithPullSnapshotter("native"), containerd.WithResolver(resolver))
		if err != nil {
			t.Fatalf("pulling %s: %v", p.ref, err)
		}
		newContainer := func(id string) containerd.Container {
			t.Helper()
			c, err := client.NewContainer(ctx, id, containerd.WithImage(img), containerd.WithSnapshotter("native"),
				containerd.WithNewSnapshot(id+"-snap", img), containerd.WithNewSpec(oci.WithImageConfig(img)))
			if err != nil {
				t.Fatalf("creating container %s: %v", id, err)
			}
			t.Cleanup(func() { c.Delete(context.Background(), containerd.WithSnapshotCleanup) })
			return c
		}
		web := newContainer("web")
		task, err := web.NewTask(ctx, cio.NullIO)
		if err != nil {
			t.Fatalf("creating the task: %v", err)
		}
		t.Cleanup(func() {
			bg := context.Background()
			if exited, err := task.Wait(bg); err == nil {
				task.Kill(bg, 9)
				<-exited
			}
			task.Delete(bg)
		})
		if err := task.Start(ctx); err != nil {
			t.Fatalf("starting the task: %v", err)
		}
		newContainer("created")

		observe := observer(t, ctx, running.Options{ContainerdAddress: env.containerd})
		o, err := observe("containerd:lockstep/web")
		if err != nil {
			t.Fatalf("Observe: %v", err)
		}
		check(t, o, "containerd:lockstep/web", p.config.String(), []string{p.index.String(), p.manifest.String()}, nil)
		if o.Platform != platform || o.Reference != p.ref {
			t.Errorf("Platform, Reference = %q, %q; want %q, %q", o.Platform, o.Reference, platform, p.ref)
		}
		if *recordRuntimes {
			rec := recordedContainerd{Daemon: daemonVersion(t, "containerd"), Target: img.Target(), Blobs: map[digest.Digest][]byte{}, Want: o}
			info, err := web.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			si, err := client.SnapshotService(info.Snapshotter).Stat(ctx, info.SnapshotKey)
			if err != nil {
				t.Fatal(err)
			}
			rec.Chain = digest.Digest(si.Parent)
			cs := client.ContentStore()
			// Every blob the store holds but layers: the index, this
			// platform's manifest and config (the other platform's were
			// never pulled).
			if err := cs.Walk(ctx, func(ci content.Info) error {
				if ci.Size > 1<<16 {
					return nil
				}
				b, err := content.ReadBlob(ctx, cs, ocispec.Descriptor{Digest: ci.Digest, Size: ci.Size})
				rec.Blobs[ci.Digest] = b
				return err
			}); err != nil {
				t.Fatal(err)
			}
			writeRecording(t, "testdata/containerd.json", rec)
		}
		if _, err := observe("containerd:lockstep/created"); !errors.Is(err, running.ErrNotRunning) {
			t.Errorf("a container without a task: Observe = %v, want ErrNotRunning", err)
		}
		if _, err := observe("containerd:lockstep/api"); !errors.Is(err, running.ErrNoContainer) {
			t.Errorf("a container that does not exist: Observe = %v, want ErrNoContainer", err)
		}
		if _, err := observe("containerd:other/web"); !errors.Is(err, running.ErrNoContainer) {
			t.Errorf("another namespace: Observe = %v, want ErrNoContainer", err)
		}
		// The name re-pointed after the container started (a re-tag, a
		// re-pull of a moved tag): the record no longer says what runs.
		moved := img.Metadata()
		moved.Target = p.otherDesc
		if _, err := client.ImageService().Update(ctx, moved, "target"); err != nil {
			t.Fatalf("re-pointing %s: %v", p.ref, err)
		}
		if o, err := observe("containerd:lockstep/web"); !errors.Is(err, running.ErrImageChanged) {
			t.Errorf("after the image record moved: Observe = %+v, %v; want ErrImageChanged", o, err)
		}
	})

	t.Run("cri", func(t *testing.T) {
		conn, err := grpc.NewClient(env.cri, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rt, is := cri.NewRuntimeServiceClient(conn), cri.NewImageServiceClient(conn)
		if _, err := is.PullImage(ctx, &cri.PullImageRequest{Image: &cri.ImageSpec{Image: p.ref}}); err != nil {
			t.Fatalf("PullImage %s: %v", p.ref, err)
		}
		sandbox := &cri.PodSandboxConfig{
			Metadata: &cri.PodSandboxMetadata{Name: "webpod", Namespace: "default", Uid: "lockstep-test-1"},
			Labels:   map[string]string{"io.kubernetes.pod.name": "webpod"},
			Linux: &cri.LinuxPodSandboxConfig{SecurityContext: &cri.LinuxSandboxSecurityContext{
				NamespaceOptions: &cri.NamespaceOption{Network: cri.NamespaceMode_NODE}}},
		}
		pod, err := rt.RunPodSandbox(ctx, &cri.RunPodSandboxRequest{Config: sandbox})
		if err != nil {
			t.Fatalf("RunPodSandbox: %v", err)
		}
		t.Cleanup(func() {
			rt.StopPodSandbox(context.Background(), &cri.StopPodSandboxRequest{PodSandboxId: pod.PodSandboxId})
			rt.RemovePodSandbox(context.Background(), &cri.RemovePodSandboxRequest{PodSandboxId: pod.PodSandboxId})
		})
		create := func(name string) string {
			t.Helper()
			c, err := rt.CreateContainer(ctx, &cri.CreateContainerRequest{PodSandboxId: pod.PodSandboxId, SandboxConfig: sandbox,
				Config: &cri.ContainerConfig{Metadata: &cri.ContainerMetadata{Name: name}, Image: &cri.ImageSpec{Image: p.ref},
					Labels: map[string]string{"io.kubernetes.pod.name": "webpod"}}})
			if err != nil {
				t.Fatalf("CreateContainer %s: %v", name, err)
			}
			return c.ContainerId
		}
		id := create("web")
		if _, err := rt.StartContainer(ctx, &cri.StartContainerRequest{ContainerId: id}); err != nil {
			t.Fatalf("StartContainer: %v", err)
		}
		create("created")

		observe := observer(t, ctx, running.Options{CRIEndpoint: env.cri})
		for _, spec := range []string{"cri:webpod/web", "cri:web", "cri:" + id} {
			o, err := observe(spec)
			if err != nil {
				t.Fatalf("Observe(%s): %v", spec, err)
			}
			check(t, o, "cri:webpod/web", p.config.String(), []string{p.index.String()}, nil)
			if o.Platform != platform || o.Reference != p.ref {
				t.Errorf("%s: Platform, Reference = %q, %q; want %q, %q", spec, o.Platform, o.Reference, platform, p.ref)
			}
		}
		if *recordRuntimes {
			rec, err := crifake.Record(ctx, conn, "containerd "+daemonVersion(t, "containerd"))
			if err != nil {
				t.Fatalf("recording: %v", err)
			}
			o, _ := observe("cri:webpod/web")
			writeRecording(t, "testdata/cri-containerd.json", recordedCRI{Recording: rec, Want: o})
		}
		if _, err := observe("cri:webpod/created"); !errors.Is(err, running.ErrNotRunning) {
			t.Errorf("a created container: Observe = %v, want ErrNotRunning", err)
		}
		if _, err := observe("cri:webpod/api"); !errors.Is(err, running.ErrNoContainer) {
			t.Errorf("a container that does not exist: Observe = %v, want ErrNoContainer", err)
		}
	})

	t.Run("docker", func(t *testing.T) {
		api := dockerAPI(t, env.docker)
		repo, tag, _ := strings.Cut(p.ref[len(reg)+1:], ":")
		api("POST", "/images/create?"+url.Values{"fromImage": {reg + "/" + repo}, "tag": {tag}}.Encode(), nil)
		api("POST", "/containers/create?name=web", map[string]any{"Image": p.ref, "HostConfig": map[string]any{"NetworkMode": "none"}})
		t.Cleanup(func() { api("DELETE", "/containers/web?force=1", nil) })
		api("POST", "/containers/web/start", nil)
		api("POST", "/containers/create?name=created", map[string]any{"Image": p.ref, "HostConfig": map[string]any{"NetworkMode": "none"}})
		t.Cleanup(func() { api("DELETE", "/containers/created?force=1", nil) })

		observe := observer(t, ctx, running.Options{DockerHost: env.docker})
		o, err := observe("docker:web")
		if err != nil {
			t.Fatalf("Observe: %v", err)
		}
		check(t, o, "docker:web", p.config.String(), []string{p.index.String()}, nil)
		if o.Platform != platform || o.Reference != p.ref {
			t.Errorf("Platform, Reference = %q, %q; want %q, %q", o.Platform, o.Reference, platform, p.ref)
		}
		if *recordRuntimes {
			rec := recordedDocker{Daemon: daemonVersion(t, "dockerd"), Answers: map[string]json.RawMessage{}, Want: o}
			for _, path := range []string{"/_ping", "/version", "/containers/json", "/containers/web/json", "/containers/created/json", "/images/" + o.ImageID.String() + "/json"} {
				b, h := dockerGet(t, env.docker, path)
				if path == "/_ping" {
					rec.APIVersion = h.Get("Api-Version")
					continue
				}
				rec.Answers[path] = b
			}
			writeRecording(t, "testdata/docker.json", rec)
		}
		if _, err := observe("docker:created"); !errors.Is(err, running.ErrNotRunning) {
			t.Errorf("a created container: Observe = %v, want ErrNotRunning", err)
		}
	})
}

// observer returns Observe of the source a spec names, with opt.
func observer(t *testing.T, ctx context.Context, opt running.Options) func(spec string) (*running.Observation, error) {
	return func(spec string) (*running.Observation, error) {
		t.Helper()
		src, err := running.Parse(spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		return src.Observe(ctx)
	}
}

// unixClient is an HTTP client of the unix socket of host (unix:///path).
func unixClient(host string) *http.Client {
	sock := strings.TrimPrefix(host, "unix://")
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

// dockerGet returns the body and headers of GET path on host.
func dockerGet(t *testing.T, host, path string) (json.RawMessage, http.Header) {
	t.Helper()
	resp, err := unixClient(host).Get("http://docker" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", path, resp.Status, err)
	}
	if path == "/_ping" {
		return nil, resp.Header
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return b, resp.Header
}

// dockerAPI returns a caller of the Engine API on host that fails the
// test on an error status.
func dockerAPI(t *testing.T, host string) func(method, path string, body any) {
	hc := unixClient(host)
	return func(method, path string, body any) {
		t.Helper()
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, "http://docker"+path, r)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 && !(method == "DELETE" && resp.StatusCode == http.StatusNotFound) {
			t.Fatalf("%s %s: %s: %s", method, path, resp.Status, b)
		}
	}
}
