package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest/crifake"
)

// TestAdmitRuntimes: --running cri: and containerd: through the CLI, their
// sockets named by CONTAINER_RUNTIME_ENDPOINT and CONTAINERD_ADDRESS (the
// run's own) as on a node: the image the manifest names admits, a tag refuses, a container
// that never appears and a runtime that is not there exit 3.
func TestAdmitRuntimes(t *testing.T) {
	t.Parallel()
	e := newAdmitEnv(t)
	raw := func(m proto.Message) json.RawMessage {
		b, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	running := cri.ContainerState_CONTAINER_RUNNING
	webID, taggedID := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	digestRef := "127.0.0.1:5000/web@sha256:" + strings.Repeat("2", 64)
	status := func(id, name, ref string) json.RawMessage {
		return raw(&cri.ContainerStatusResponse{Status: &cri.ContainerStatus{Id: id, Metadata: &cri.ContainerMetadata{Name: name},
			State: running, Image: &cri.ImageSpec{Image: "127.0.0.1:5000/web:v1"}, ImageRef: ref}})
	}
	rec := &crifake.Recording{
		Runtime: "built by the test",
		ListContainers: raw(&cri.ListContainersResponse{Containers: []*cri.Container{
			{Id: webID, Metadata: &cri.ContainerMetadata{Name: "web"}, State: running},
			{Id: taggedID, Metadata: &cri.ContainerMetadata{Name: "tagged"}, State: running},
		}}),
		ContainerStatus: map[string]json.RawMessage{
			webID:    status(webID, "web", digestRef),
			taggedID: status(taggedID, "tagged", "127.0.0.1:5000/web:v1"),
		},
		ImageStatus: map[string]json.RawMessage{digestRef: raw(&cri.ImageStatusResponse{
			Image: &cri.Image{Id: e.config.String(), RepoDigests: []string{digestRef}},
			Info:  map[string]string{"info": `{"imageSpec":{"os":"linux","architecture":"amd64"}}`},
		})},
	}
	cri := "unix://" + crifake.Serve(t, rec)
	dir, err := os.MkdirTemp("", "ctrd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	env := []string{"CONTAINER_RUNTIME_ENDPOINT=" + cri, "CONTAINERD_ADDRESS=" + filepath.Join(dir, "containerd.sock")}
	// A short --timeout where the answer is to give up (exit 3), so that
	// the case ends soon; the default where the runtime answers, whose
	// observation may take more than a 2 s check's share (333 ms) on a
	// loaded machine.
	for _, tt := range []struct {
		running string
		timeout string
		code    int
		say     string
	}{
		{"cri:web", "", 0, ""},
		{"cri:tagged", "", 1, "image-not-pinned"},
		{"cri:gone", "2s", 3, "dependency-unreachable"},
		{"containerd:web", "2s", 3, "dependency-unreachable"},
		{"containerd:/web", "", 2, "want [NAMESPACE/]CONTAINER"},
	} {
		args := append(e.args(), "--platform", "linux/amd64", "--running", tt.running)
		if tt.timeout != "" {
			args = append(args, "--timeout", tt.timeout)
		}
		code, out, errs := runIn(t, env, args...)
		if code != tt.code || !strings.Contains(out+errs, tt.say) {
			t.Errorf("--running %s: exit %d, want %d saying %q\n%s\n%s", tt.running, code, tt.code, tt.say, out, errs)
		}
	}
}
