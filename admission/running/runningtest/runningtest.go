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
	"strings"
	"sync/atomic"
	"testing"
)

// Container is one container the fakes report.
type Container struct {
	ID   string
	Name string
	// Reference is the image reference it was started from (Config.Image).
	Reference string
	// ImageID is the image ID (Docker: the config digest).
	ImageID     string
	RepoDigests []string
	OS, Arch    string
	Variant     string
	// Stopped makes the container exist but not run.
	Stopped bool
}

// DockerAPIVersion is the API version the fake Docker daemon announces.
const DockerAPIVersion = "1.43"

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

// DockerHandler is the fake Docker Engine API; requests (optional) counts
// what it serves.
func DockerHandler(requests *atomic.Int64, cs ...Container) http.Handler {
	find := func(id string) *Container {
		for i := range cs {
			c := &cs[i]
			if c.ID == id || c.Name == id || strings.HasPrefix(c.ID, id) && len(id) >= 12 {
				return c
			}
		}
		return nil
	}
	findImage := func(id string) *Container {
		for i := range cs {
			if cs[i].ImageID == id {
				return &cs[i]
			}
		}
		return nil
	}
	notFound := func(w http.ResponseWriter, what string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]string{"message": what})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests != nil {
			requests.Add(1)
		}
		w.Header().Set("Api-Version", DockerAPIVersion)
		w.Header().Set("Server", "Docker/24.0.7 (linux)")
		if r.URL.Path == "/_ping" {
			w.Write([]byte("OK"))
			return
		}
		p, ok := strings.CutPrefix(r.URL.Path, "/v"+DockerAPIVersion)
		if !ok {
			http.Error(w, `{"message":"client version not supported"}`, http.StatusBadRequest)
			return
		}
		parts := strings.Split(strings.Trim(p, "/"), "/")
		switch {
		case len(parts) == 2 && parts[0] == "containers" && parts[1] == "json":
			list := []map[string]any{}
			for _, c := range cs {
				if c.Stopped && r.URL.Query().Get("all") == "" {
					continue
				}
				state := "running"
				if c.Stopped {
					state = "exited"
				}
				list = append(list, map[string]any{
					"Id": c.ID, "Names": []string{"/" + c.Name}, "Image": c.Reference, "ImageID": c.ImageID,
					"Command": "/app", "Created": 1700000000, "State": state, "Status": "Up 2 minutes",
					"Labels": map[string]string{},
				})
			}
			writeJSON(w, list)
		case len(parts) == 3 && parts[0] == "containers" && parts[2] == "json":
			c := find(parts[1])
			if c == nil {
				notFound(w, "No such container: "+parts[1])
				return
			}
			status := "running"
			if c.Stopped {
				status = "exited"
			}
			writeJSON(w, map[string]any{
				"Id": c.ID, "Created": "2026-12-01T08:00:00.000000000Z", "Path": "/app", "Args": []string{},
				"State": map[string]any{"Status": status, "Running": !c.Stopped, "Paused": false, "Pid": 4242, "ExitCode": 0},
				"Image": c.ImageID, "Name": "/" + c.Name, "RestartCount": 0, "Driver": "overlay2", "Platform": c.OS,
				"Config": map[string]any{"Hostname": c.ID[:min(12, len(c.ID))], "Image": c.Reference, "Labels": map[string]string{}},
			})
		case len(parts) >= 3 && parts[0] == "images" && parts[len(parts)-1] == "json":
			id := strings.Join(parts[1:len(parts)-1], "/")
			c := findImage(id)
			if c == nil {
				notFound(w, "No such image: "+id)
				return
			}
			tags := []string{}
			if c.Reference != "" && !strings.Contains(c.Reference, "@") {
				tags = append(tags, c.Reference)
			}
			digests := c.RepoDigests
			if digests == nil {
				digests = []string{}
			}
			writeJSON(w, map[string]any{
				"Id": c.ImageID, "RepoTags": tags, "RepoDigests": digests, "Created": "2026-11-30T12:00:00Z",
				"Os": c.OS, "Architecture": c.Arch, "Variant": c.Variant, "Size": 1234567,
				"RootFS": map[string]any{"Type": "layers", "Layers": []string{}},
			})
		default:
			http.Error(w, `{"message":"page not found"}`, http.StatusNotFound)
		}
	})
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
