// Package runningtest holds protocol fakes of the container runtimes the
// running package reads, for tests: a Docker Engine API on a unix socket
// and an ECS task metadata endpoint v4, both answering with the real API's
// JSON shapes.
package runningtest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/fixture/dockerapi"
)

// Container is one container the fakes report.
type Container = dockerapi.Container

// DockerAPIVersion is the API version the fake Docker daemon announces.
const DockerAPIVersion = dockerapi.APIVersion

// Docker serves a fake Docker Engine API on a unix socket in a temporary
// directory for the life of the test, and returns its DOCKER_HOST
// ("unix:///.../docker.sock") and a counter of requests served.
func Docker(t testing.TB, cs ...Container) (host string, requests *atomic.Int64) {
	t.Helper()
	l, sock := Listen(t, "docker.sock")
	requests = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(DockerHandler(requests, cs...))
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return "unix://" + sock, requests
}

// Listen listens on a unix socket named name in a temporary directory
// (short, unlike t.TempDir's, for the 108 bytes of a socket path) for the
// life of the test, and returns the listener and the socket's path.
func Listen(t testing.TB, name string) (net.Listener, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "runtimefake")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, name)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	return l, sock
}

// DockerHandler is the fake Docker Engine API (dockerapi.Handler);
// requests (optional) counts what it serves.
func DockerHandler(requests *atomic.Int64, cs ...Container) http.Handler {
	return dockerapi.Handler(requests, cs...)
}

// ECS serves a fake ECS task metadata endpoint v4 for the life of the
// test and returns its ECS_CONTAINER_METADATA_URI_V4: the metadata of
// self at the URI, the task (every container) at URI/task.
func ECS(t testing.TB, self string, cs ...Container) string {
	t.Helper()
	meta := func(c Container) map[string]any {
		status := "RUNNING"
		if c.Stopped {
			status = "STOPPED"
		}
		return map[string]any{
			"DockerId": c.ID, "Name": c.Name, "DockerName": "ecs-task-1-" + c.Name, "Image": c.Reference,
			"ImageID": c.ImageID, "Labels": map[string]string{"com.amazonaws.ecs.container-name": c.Name},
			"DesiredStatus": "RUNNING", "KnownStatus": status, "Type": "NORMAL",
			"ContainerARN": "arn:aws:ecs:us-east-1:111122223333:container/" + c.ID,
		}
	}
	mux := http.NewServeMux()
	prefix := "/v4/0123456789abcdef"
	mux.HandleFunc("GET "+prefix, func(w http.ResponseWriter, r *http.Request) {
		for _, c := range cs {
			if c.Name == self {
				writeJSON(w, meta(c))
				return
			}
		}
		writeJSON(w, map[string]any{"DockerId": "self", "Name": self, "Image": "lockstep:latest", "ImageID": ""})
	})
	mux.HandleFunc("GET "+prefix+"/task", func(w http.ResponseWriter, r *http.Request) {
		var list []map[string]any
		for _, c := range cs {
			list = append(list, meta(c))
		}
		writeJSON(w, map[string]any{
			"Cluster": "default", "TaskARN": "arn:aws:ecs:us-east-1:111122223333:task/default/0123456789abcdef",
			"Family": "web", "Revision": "3", "DesiredStatus": "RUNNING", "KnownStatus": "RUNNING",
			"Containers": list, "LaunchType": "FARGATE", "AvailabilityZone": "us-east-1a",
		})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + prefix
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
