// Package dockerapi serves the part of the Docker Engine API that
// lockstep's running package reads (GET /_ping, /containers/json,
// /containers/ID/json, /images/ID/json), from a fixed list of containers,
// with the real API's JSON shapes: the Docker daemon of the demo's
// instances and of the tests (admission/running/runningtest). It imports
// no test machinery, so the demo can link it.
package dockerapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
)

// Container is one container the API reports.
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

// APIVersion is the API version the server announces.
const APIVersion = "1.43"

// Handler serves the Docker Engine API endpoints the running package
// reads (ping, container list and inspect, image inspect) for cs;
// requests (optional) counts what it serves.
func Handler(requests *atomic.Int64, cs ...Container) http.Handler {
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
		w.Header().Set("Api-Version", APIVersion)
		w.Header().Set("Server", "Docker/24.0.7 (linux)")
		if r.URL.Path == "/_ping" {
			w.Write([]byte("OK"))
			return
		}
		p, ok := strings.CutPrefix(r.URL.Path, "/v"+APIVersion)
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

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
