package running_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	containersapi "github.com/containerd/containerd/api/services/containers/v1"
	contentapi "github.com/containerd/containerd/api/services/content/v1"
	imagesapi "github.com/containerd/containerd/api/services/images/v1"
	snapshotsapi "github.com/containerd/containerd/api/services/snapshots/v1"
	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/api/types"
	"github.com/containerd/containerd/api/types/task"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// fakeContainer is one container record of fakeContainerd.
type fakeContainer struct {
	image, snapshotter, key string
	task                    task.Status // 0 (UNKNOWN): no task
}

// fakeContainerd is containerd's gRPC API as the Containerd source calls
// it, over a recording's image: the containers of one namespace, their
// tasks, image records, snapshots' parents and the content store. It
// answers NotFound, as containerd does, for what it lacks, and for every
// call in another namespace.
type fakeContainerd struct {
	namespace  string
	containers map[string]fakeContainer
	images     map[string]ocispec.Descriptor
	parents    map[string]string // snapshot key: parent
	blobs      map[digest.Digest][]byte
	chunk      int // bytes per content Read message
	// readHook, when set, rewrites the messages of a content Read.
	readHook func(d digest.Digest, msgs []*contentapi.ReadContentResponse) []*contentapi.ReadContentResponse
	// fail, when set, is every call's answer.
	fail error
}

func (f *fakeContainerd) check(ctx context.Context) error {
	if f.fail != nil {
		return f.fail
	}
	md, _ := metadata.FromIncomingContext(ctx)
	// containerd takes the first value.
	if ns := md.Get("containerd-namespace"); len(ns) == 0 || ns[0] != f.namespace {
		return status.Errorf(codes.NotFound, "namespace %v: not found", ns)
	}
	return nil
}

type fakeContainers struct {
	containersapi.UnimplementedContainersServer
	*fakeContainerd
}

func (f fakeContainers) Get(ctx context.Context, r *containersapi.GetContainerRequest) (*containersapi.GetContainerResponse, error) {
	if err := f.check(ctx); err != nil {
		return nil, err
	}
	c, ok := f.containers[r.ID]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %q: not found", r.ID)
	}
	return &containersapi.GetContainerResponse{Container: &containersapi.Container{ID: r.ID, Image: c.image, Snapshotter: c.snapshotter, SnapshotKey: c.key}}, nil
}

func (f fakeContainers) List(ctx context.Context, _ *containersapi.ListContainersRequest) (*containersapi.ListContainersResponse, error) {
	if err := f.check(ctx); err != nil {
		return nil, err
	}
	var out containersapi.ListContainersResponse
	for id := range f.containers {
		out.Containers = append(out.Containers, &containersapi.Container{ID: id})
	}
	return &out, nil
}

type fakeTasks struct {
	tasksapi.UnimplementedTasksServer
	*fakeContainerd
}

func (f fakeTasks) Get(ctx context.Context, r *tasksapi.GetRequest) (*tasksapi.GetResponse, error) {
	if err := f.check(ctx); err != nil {
		return nil, err
	}
	c, ok := f.containers[r.ContainerID]
	if !ok || c.task == task.Status_UNKNOWN {
		return nil, status.Errorf(codes.NotFound, "task %q: not found", r.ContainerID)
	}
	return &tasksapi.GetResponse{Process: &task.Process{ID: r.ContainerID, ContainerID: r.ContainerID, Status: c.task}}, nil
}

type fakeImages struct {
	imagesapi.UnimplementedImagesServer
	*fakeContainerd
}

func (f fakeImages) Get(ctx context.Context, r *imagesapi.GetImageRequest) (*imagesapi.GetImageResponse, error) {
	if err := f.check(ctx); err != nil {
		return nil, err
	}
	d, ok := f.images[r.Name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "image %q: not found", r.Name)
	}
	return &imagesapi.GetImageResponse{Image: &imagesapi.Image{Name: r.Name, Target: &types.Descriptor{MediaType: d.MediaType, Digest: d.Digest.String(), Size: d.Size}}}, nil
}

type fakeSnapshots struct {
	snapshotsapi.UnimplementedSnapshotsServer
	*fakeContainerd
}

func (f fakeSnapshots) Stat(ctx context.Context, r *snapshotsapi.StatSnapshotRequest) (*snapshotsapi.StatSnapshotResponse, error) {
	if err := f.check(ctx); err != nil {
		return nil, err
	}
	p, ok := f.parents[r.Key]
	if !ok || r.Snapshotter != "native" {
		return nil, status.Errorf(codes.NotFound, "snapshot %s/%s: not found", r.Snapshotter, r.Key)
	}
	return &snapshotsapi.StatSnapshotResponse{Info: &snapshotsapi.Info{Name: r.Key, Parent: p}}, nil
}

type fakeContent struct {
	contentapi.UnimplementedContentServer
	*fakeContainerd
}

func (f fakeContent) Read(r *contentapi.ReadContentRequest, stream contentapi.Content_ReadServer) error {
	if err := f.check(stream.Context()); err != nil {
		return err
	}
	b, ok := f.blobs[digest.Digest(r.Digest)]
	if !ok {
		return status.Errorf(codes.NotFound, "content digest %s: not found", r.Digest)
	}
	n := f.chunk
	if n <= 0 {
		n = 1 << 20
	}
	var msgs []*contentapi.ReadContentResponse
	for off := 0; off < len(b); off += n {
		msgs = append(msgs, &contentapi.ReadContentResponse{Offset: int64(off), Data: b[off:min(off+n, len(b))]})
	}
	if f.readHook != nil {
		msgs = f.readHook(digest.Digest(r.Digest), msgs)
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	return nil
}

// serveContainerd serves f on a unix socket for the life of the test and
// returns the socket's path.
func serveContainerd(t *testing.T, f *fakeContainerd) string {
	t.Helper()
	l, sock := runningtest.Listen(t, "containerd.sock")
	srv := grpc.NewServer()
	containersapi.RegisterContainersServer(srv, fakeContainers{fakeContainerd: f})
	tasksapi.RegisterTasksServer(srv, fakeTasks{fakeContainerd: f})
	imagesapi.RegisterImagesServer(srv, fakeImages{fakeContainerd: f})
	snapshotsapi.RegisterSnapshotsServer(srv, fakeSnapshots{fakeContainerd: f})
	contentapi.RegisterContentServer(srv, fakeContent{fakeContainerd: f})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); srv.Serve(l) }()
	t.Cleanup(func() { srv.Stop(); wg.Wait() })
	return sock
}

// TestContainerdAPI replays what the real containerd held for a running
// container (testdata/containerd.json) through a fake of its gRPC API,
// and asks what else could make the source report that image: another
// namespace, a stopped or never-started task, a content store that
// sends other bytes, more bytes or bytes out of order.
func TestContainerdAPI(t *testing.T) {
	rec := readContainerdRecording(t)
	ref := rec.Want.Reference
	fake := func() *fakeContainerd {
		return &fakeContainerd{
			namespace:  "lockstep",
			containers: map[string]fakeContainer{"web": {image: ref, snapshotter: "native", key: "web-snap", task: task.Status_RUNNING}},
			images:     map[string]ocispec.Descriptor{ref: rec.Target},
			parents:    map[string]string{"web-snap": rec.Chain.String()},
			blobs:      rec.Blobs,
			chunk:      100,
		}
	}
	observe := func(t *testing.T, f *fakeContainerd, spec string) (*running.Observation, error) {
		t.Helper()
		src, err := running.Parse(spec, running.Options{ContainerdAddress: serveContainerd(t, f)})
		if err != nil {
			t.Fatal(err)
		}
		return src.Observe(context.Background())
	}

	t.Run("the recording reads as the daemon did", func(t *testing.T) {
		for _, spec := range []string{"containerd:lockstep/web", "containerd:lockstep/"} {
			o, err := observe(t, fake(), spec)
			if err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
			checkSame(t, spec, o, &rec.Want)
		}
	})
	t.Run("a namespace on the caller's context is replaced", func(t *testing.T) {
		src, err := running.Parse("containerd:other/web", running.Options{ContainerdAddress: serveContainerd(t, fake())})
		if err != nil {
			t.Fatal(err)
		}
		ctx := metadata.AppendToOutgoingContext(context.Background(), "containerd-namespace", "lockstep")
		if o, err := src.Observe(ctx); !errors.Is(err, running.ErrNoContainer) {
			t.Errorf("Observe = %+v, %v; want ErrNoContainer", o, err)
		}
	})
	t.Run("the image record gone leaves only the name", func(t *testing.T) {
		f := fake()
		f.images = nil
		o, err := observe(t, f, "containerd:lockstep/web")
		if err != nil {
			t.Fatal(err)
		}
		check(t, o, "containerd:lockstep/web", "", nil, []string{ref})
	})

	refusals := []struct {
		name string
		edit func(*fakeContainerd)
		want error // a sentinel, or nil for *verdict.UnavailableError
		text string
	}{
		{"another namespace", func(f *fakeContainerd) { f.namespace = "other" }, running.ErrNoContainer, ""},
		{"no task started", func(f *fakeContainerd) { f.containers["web"] = fakeContainer{image: ref, task: task.Status_UNKNOWN} }, running.ErrNotRunning, "no task started"},
		{"a stopped task", func(f *fakeContainerd) {
			f.containers["web"] = fakeContainer{image: ref, snapshotter: "native", key: "web-snap", task: task.Status_STOPPED}
		}, running.ErrNotRunning, "task stopped"},
		{"a paused task", func(f *fakeContainerd) {
			f.containers["web"] = fakeContainer{image: ref, snapshotter: "native", key: "web-snap", task: task.Status_PAUSED}
		}, running.ErrNotRunning, "task paused"},
		{"the name re-pointed", func(f *fakeContainerd) { f.parents["web-snap"] = digest.FromString("other layers").String() }, running.ErrImageChanged, ""},
		{"the snapshot gone", func(f *fakeContainerd) { delete(f.parents, "web-snap") }, running.ErrNoContainer, "snapshot web-snap"},
		{"an image target that is no digest", func(f *fakeContainerd) {
			f.images[ref] = ocispec.Descriptor{MediaType: rec.Target.MediaType, Digest: "sha256:zz", Size: rec.Target.Size}
		}, nil, "target digest"},
		{"the daemon failing", func(f *fakeContainerd) { f.fail = status.Error(codes.Internal, "boltdb: disk I/O error") }, nil, "boltdb"},
		{"other bytes for a digest", func(f *fakeContainerd) {
			f.readHook = func(d digest.Digest, msgs []*contentapi.ReadContentResponse) []*contentapi.ReadContentResponse {
				if d == rec.Target.Digest {
					last := msgs[len(msgs)-1]
					data := append([]byte(nil), last.Data...)
					data[len(data)-1] ^= 1
					msgs[len(msgs)-1] = &contentapi.ReadContentResponse{Offset: last.Offset, Data: data}
				}
				return msgs
			}
		}, nil, "content hashes to"},
		{"a chunk out of order", func(f *fakeContainerd) {
			f.readHook = func(_ digest.Digest, msgs []*contentapi.ReadContentResponse) []*contentapi.ReadContentResponse {
				if len(msgs) > 2 {
					msgs[1], msgs[2] = msgs[2], msgs[1]
				}
				return msgs
			}
		}, nil, "sent offset"},
		{"a blob without end", func(f *fakeContainerd) {
			f.readHook = func(_ digest.Digest, msgs []*contentapi.ReadContentResponse) []*contentapi.ReadContentResponse {
				chunk := make([]byte, 1<<20)
				out := msgs[:0:0]
				for off := int64(0); off <= 5<<20; off += int64(len(chunk)) {
					out = append(out, &contentapi.ReadContentResponse{Offset: off, Data: chunk})
				}
				return out
			}
		}, nil, "over 4194304 bytes"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			f := fake()
			tc.edit(f)
			o, err := observe(t, f, "containerd:lockstep/web")
			if err == nil {
				t.Fatalf("Observe = %+v, want an error", o)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Observe: %v; want %v", err, tc.want)
			}
			var unavailable *verdict.UnavailableError
			if tc.want == nil && !errors.As(err, &unavailable) {
				t.Errorf("Observe: %v (%T); want an *verdict.UnavailableError", err, err)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("Observe: %v; want it to say %q", err, tc.text)
			}
		})
	}
}
