// Package crifake is a protocol fake of the Kubernetes Container Runtime
// Interface for tests: a gRPC server on a unix socket answering with what
// a real runtime answered (a recording). It is apart from runningtest,
// which the demo links, so that no CRI server is linked into lockstep.
package crifake

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
)

// Recording is what a CRI runtime answered, as protojson: the
// ListContainers answer, and ContainerStatus and ImageStatus answers by
// the ID or reference asked for. Record one from a real runtime with
// Record; serve one with Serve.
type Recording struct {
	// Runtime names the runtime recorded, e.g. "containerd 1.6.20".
	Runtime         string                     `json:"runtime"`
	ListContainers  json.RawMessage            `json:"listContainers"`
	ContainerStatus map[string]json.RawMessage `json:"containerStatus"`
	ImageStatus     map[string]json.RawMessage `json:"imageStatus"`
}

// Record asks a real runtime on conn for its containers, the status of
// each and of each one's image (by the reference the container runs), and
// returns the answers.
func Record(ctx context.Context, conn *grpc.ClientConn, runtime string) (*Recording, error) {
	rt, is := cri.NewRuntimeServiceClient(conn), cri.NewImageServiceClient(conn)
	rec := &Recording{Runtime: runtime, ContainerStatus: map[string]json.RawMessage{}, ImageStatus: map[string]json.RawMessage{}}
	list, err := rt.ListContainers(ctx, &cri.ListContainersRequest{})
	if err != nil {
		return nil, err
	}
	if rec.ListContainers, err = protojson.Marshal(list); err != nil {
		return nil, err
	}
	for _, c := range list.GetContainers() {
		st, err := rt.ContainerStatus(ctx, &cri.ContainerStatusRequest{ContainerId: c.GetId()})
		if err != nil {
			return nil, err
		}
		if rec.ContainerStatus[c.GetId()], err = protojson.Marshal(st); err != nil {
			return nil, err
		}
		ref := st.GetStatus().GetImageRef()
		im, err := is.ImageStatus(ctx, &cri.ImageStatusRequest{Image: &cri.ImageSpec{Image: ref}, Verbose: true})
		if err != nil {
			return nil, err
		}
		if rec.ImageStatus[ref], err = protojson.Marshal(im); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// Read reads a recording written as JSON.
func Read(t testing.TB, path string) *Recording {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec Recording
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &rec
}

// Serve serves rec as a CRI runtime on a unix socket in a temporary
// directory for the life of the test, and returns the socket's path. A
// container or image the recording lacks is NotFound, as a real runtime
// answers; ImageStatus of an unknown image is an empty answer, as CRI
// specifies.
func Serve(t testing.TB, rec *Recording) string {
	t.Helper()
	l, sock := runningtest.Listen(t, "cri.sock")
	srv := grpc.NewServer()
	f := &criFake{rec: rec}
	cri.RegisterRuntimeServiceServer(srv, f)
	cri.RegisterImageServiceServer(srv, f)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); srv.Serve(l) }()
	t.Cleanup(func() { srv.Stop(); wg.Wait() })
	return sock
}

type criFake struct {
	cri.UnimplementedRuntimeServiceServer
	cri.UnimplementedImageServiceServer
	rec *Recording
}

func (f *criFake) ListContainers(context.Context, *cri.ListContainersRequest) (*cri.ListContainersResponse, error) {
	var out cri.ListContainersResponse
	return &out, protojson.Unmarshal(f.rec.ListContainers, &out)
}

func (f *criFake) ContainerStatus(_ context.Context, req *cri.ContainerStatusRequest) (*cri.ContainerStatusResponse, error) {
	b, ok := f.rec.ContainerStatus[req.GetContainerId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "an error occurred when try to find container %q: not found", req.GetContainerId())
	}
	var out cri.ContainerStatusResponse
	return &out, protojson.Unmarshal(b, &out)
}

func (f *criFake) ImageStatus(_ context.Context, req *cri.ImageStatusRequest) (*cri.ImageStatusResponse, error) {
	b, ok := f.rec.ImageStatus[req.GetImage().GetImage()]
	if !ok {
		return &cri.ImageStatusResponse{}, nil
	}
	var out cri.ImageStatusResponse
	return &out, protojson.Unmarshal(b, &out)
}
