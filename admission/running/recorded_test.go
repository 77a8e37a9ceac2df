package running_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest/crifake"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// readRecording decodes the recording at path into v.
func readRecording(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkSame checks that o, observed by spec, is what want (a real
// daemon's reading) says.
func checkSame(t *testing.T, spec string, o, want *running.Observation) {
	t.Helper()
	var repo []string
	for _, d := range want.RepoDigests {
		repo = append(repo, d.String())
	}
	check(t, o, want.Source, want.ImageID.String(), repo, nil)
	if o.Platform != want.Platform || o.Reference != want.Reference {
		t.Errorf("Observe(%s): Platform, Reference = %q, %q; want %q, %q", spec, o.Platform, o.Reference, want.Platform, want.Reference)
	}
}

// readRecordedCRI reads testdata/cri-containerd.json, what the real
// containerd 1.6 CRI answered in TestRealRuntimes (-record-runtimes
// rewrites it).
func readRecordedCRI(t *testing.T) recordedCRI {
	t.Helper()
	var r recordedCRI
	readRecording(t, "testdata/cri-containerd.json", &r)
	if r.Recording == nil || r.Want == nil || r.Want.ImageID.IsZero() {
		t.Fatal("testdata/cri-containerd.json holds no recording or no observation")
	}
	return r
}

// edit returns a copy of rec's protojson message at m[key], changed by fn
// (on its decoded JSON).
func edit(t *testing.T, m map[string]json.RawMessage, key string, fn func(map[string]any)) map[string]json.RawMessage {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(m[key], &v); err != nil {
		t.Fatal(err)
	}
	fn(v)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for k, x := range m {
		out[k] = x
	}
	out[key] = b
	return out
}

// addTwin returns the ListContainers answer list with a copy of container
// id added, changed by change.
func addTwin(t *testing.T, list json.RawMessage, id string, change func(map[string]any)) json.RawMessage {
	t.Helper()
	var l map[string]any
	if err := json.Unmarshal(list, &l); err != nil {
		t.Fatal(err)
	}
	cs := l["containers"].([]any)
	for _, c := range cs {
		if c.(map[string]any)["id"] != id {
			continue
		}
		b, _ := json.Marshal(c)
		twin := map[string]any{}
		if err := json.Unmarshal(b, &twin); err != nil {
			t.Fatal(err)
		}
		change(twin)
		l["containers"] = append(cs, twin)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordedCRI serves the real containerd CRI's recorded answers and
// checks the source reads them as it read the real runtime; then changes
// them the ways a runtime or an attacker could, and checks none is read as
// a yes.
func TestRecordedCRI(t *testing.T) {
	r := readRecordedCRI(t)
	var list struct {
		Containers []struct {
			ID       string `json:"id"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(r.Recording.ListContainers, &list); err != nil {
		t.Fatal(err)
	}
	webID := ""
	for _, c := range list.Containers {
		if c.Metadata.Name == "web" {
			webID = c.ID
		}
	}
	if webID == "" {
		t.Fatal("the recording has no container named web")
	}
	observe := func(rec *crifake.Recording, spec string) (*running.Observation, error) {
		t.Helper()
		src, err := running.Parse(spec, running.Options{CRIEndpoint: "unix://" + crifake.Serve(t, rec)})
		if err != nil {
			t.Fatal(err)
		}
		return src.Observe(context.Background())
	}
	for _, spec := range []string{"cri:webpod/web", "cri:web", "cri:" + webID, "cri:" + webID[:12]} {
		o, err := observe(r.Recording, spec)
		if err != nil {
			t.Fatalf("Observe(%s): %v", spec, err)
		}
		checkSame(t, spec, o, r.Want)
	}
	if _, err := observe(r.Recording, "cri:webpod/created"); !errors.Is(err, running.ErrNotRunning) {
		t.Errorf("a created container: %v, want ErrNotRunning", err)
	}
	if _, err := observe(r.Recording, "cri:webpod/api"); !errors.Is(err, running.ErrNoContainer) {
		t.Errorf("a missing container: %v, want ErrNoContainer", err)
	}
	if _, err := observe(r.Recording, "cri:otherpod/web"); !errors.Is(err, running.ErrNoContainer) {
		t.Errorf("another pod: %v, want ErrNoContainer", err)
	}

	t.Run("a tag as ImageRef is not resolved", func(t *testing.T) {
		// A runtime reporting the tag the container was started by: the
		// tag now names the release's image, the container runs another.
		rec := *r.Recording
		tag := r.Want.Reference
		rec.ContainerStatus = edit(t, rec.ContainerStatus, webID, func(v map[string]any) {
			v["status"].(map[string]any)["imageRef"] = tag
		})
		rec.ImageStatus = map[string]json.RawMessage{}
		for _, x := range r.Recording.ImageStatus {
			rec.ImageStatus[tag] = x
		}
		o, err := observe(&rec, "cri:webpod/web")
		if err != nil {
			t.Fatal(err)
		}
		if !o.ImageID.IsZero() || len(o.RepoDigests) > 0 || !slices.Equal(o.Unpinned, []string{tag}) {
			t.Errorf("Observe = %+v; want only %q, unpinned", o, tag)
		}
	})

	t.Run("a name in two pods is ambiguous", func(t *testing.T) {
		rec := *r.Recording
		rec.ListContainers = addTwin(t, rec.ListContainers, webID, func(twin map[string]any) {
			twin["id"] = strings.Repeat("f", 64)
			twin["labels"] = map[string]any{"io.kubernetes.pod.name": "otherpod"}
		})
		if o, err := observe(&rec, "cri:web"); !errors.Is(err, running.ErrAmbiguous) {
			t.Errorf("Observe = %+v, %v; want ErrAmbiguous", o, err)
		}
	})

	t.Run("a restarted container's exited attempt is not a second one", func(t *testing.T) {
		// Kubelet keeps the exited attempt of a restarted container under
		// the same name in the same pod.
		rec := *r.Recording
		rec.ListContainers = addTwin(t, rec.ListContainers, webID, func(twin map[string]any) {
			twin["id"], twin["state"] = strings.Repeat("e", 64), "CONTAINER_EXITED"
		})
		for _, spec := range []string{"cri:web", "cri:webpod/web"} {
			if o, err := observe(&rec, spec); err != nil || o.Container != webID {
				t.Errorf("Observe(%s) = %+v, %v; want the running %s", spec, o, err, webID[:12])
			}
		}
	})

	t.Run("the gate refuses it on another platform", func(t *testing.T) {
		// The recorded image is this host's platform of an index that also
		// holds another; a gate of that other platform must refuse it,
		// even though the index digest is the same.
		o, err := observe(r.Recording, "cri:webpod/web")
		if err != nil {
			t.Fatal(err)
		}
		other := "linux/arm64"
		if strings.HasSuffix(o.Platform, "arm64") {
			other = "linux/amd64"
		}
		host, _ := manifest.ParsePlatform(o.Platform)
		host.Digest, host.Config = manifest.MustParseDigest("sha256:"+strings.Repeat("a", 64)), o.ImageID
		otherP, _ := manifest.ParsePlatform(other)
		otherP.Digest, otherP.Config = manifest.MustParseDigest("sha256:"+strings.Repeat("b", 64)), manifest.MustParseDigest("sha256:"+strings.Repeat("c", 64))
		im := &manifest.Image{Name: "web", Ref: o.Reference, Digest: o.RepoDigests[0], Platforms: []manifest.Platform{host, otherP}}
		if match, f := admission.Match(im, o, o.Platform); f != nil || match != "config" {
			t.Errorf("on its own platform: Match = %q, %+v; want config", match, f)
		}
		if match, f := admission.Match(im, o, other); f == nil || f.Kind != admission.KindImageDigestMismatch {
			t.Errorf("on %s: Match = %q, %+v; want an image-digest-mismatch", other, match, f)
		}
		// An index without the gate's platform: its digest is no match.
		im.Platforms = im.Platforms[:1]
		noImageID := *o
		noImageID.ImageID, noImageID.Platform = manifest.Digest{}, ""
		if match, f := admission.Match(im, &noImageID, other); f == nil {
			t.Errorf("the index digest on a platform it lacks: Match = %q, want a mismatch", match)
		}
	})
}

// serveRecordedDocker serves a recorded dockerd's answers on a unix socket
// and returns its DOCKER_HOST: each recorded path, under any /vX.Y
// prefix (a container by ID too), and the Engine API's 404 for anything
// else.
func serveRecordedDocker(t *testing.T, rec recordedDocker) string {
	t.Helper()
	l, sock := runningtest.Listen(t, "docker.sock")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if v, rest, ok := strings.Cut(strings.TrimPrefix(path, "/v"), "/"); ok && strings.HasPrefix(path, "/v") && strings.Contains(v, ".") {
			path = "/" + rest
		}
		w.Header().Set("Api-Version", rec.APIVersion)
		if path == "/_ping" {
			w.Write([]byte("OK"))
			return
		}
		b, ok := rec.Answers[path]
		if id, isInspect := strings.CutPrefix(path, "/containers/"); !ok && isInspect {
			// A container asked for by ID: its answer recorded by name.
			id = strings.TrimSuffix(id, "/json")
			for p, a := range rec.Answers {
				var c struct{ ID string }
				if strings.HasPrefix(p, "/containers/") && json.Unmarshal(a, &c) == nil && c.ID == id {
					b, ok = a, true
				}
			}
		}
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"No such object: ` + path + `"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return "unix://" + sock
}

// TestRecordedDocker serves what the real dockerd 20.10 answered in
// TestRealRuntimes (testdata/docker.json, rewritten by -record-runtimes)
// and checks the source reads it as it read the daemon.
func TestRecordedDocker(t *testing.T) {
	var rec recordedDocker
	readRecording(t, "testdata/docker.json", &rec)
	if rec.Want == nil || rec.Want.ImageID.IsZero() || len(rec.Answers) == 0 {
		t.Fatal("testdata/docker.json holds no answers or no observation")
	}
	host := serveRecordedDocker(t, rec)
	observe := observer(t, context.Background(), running.Options{DockerHost: host})
	for _, spec := range []string{"docker:web", "docker"} {
		o, err := observe(spec)
		if err != nil {
			t.Fatalf("Observe(%s): %v", spec, err)
		}
		checkSame(t, spec, o, rec.Want)
	}
	if _, err := observe("docker:created"); !errors.Is(err, running.ErrNotRunning) {
		t.Errorf("a created container: %v, want ErrNotRunning", err)
	}
	if _, err := observe("docker:gone"); !errors.Is(err, running.ErrNoContainer) {
		t.Errorf("a missing container: %v, want ErrNoContainer", err)
	}
}

// recordRuntimes rewrites the recordings of real runtimes' answers in
// testdata, which the recorded fakes serve where the runtimes cannot run.
var recordRuntimes = flag.Bool("record-runtimes", false, "record the real runtimes' answers into testdata")

// recordedCRI is a recording and what the source read from the real
// runtime (checked there against the pushed digests).
type recordedCRI struct {
	Recording *crifake.Recording   `json:"recording"`
	Want      *running.Observation `json:"want"`
}

// writeRecording writes v as indented JSON to path.
func writeRecording(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// daemonVersion is the installed daemon's version line.
func daemonVersion(t *testing.T, bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	return strings.TrimSpace(string(out))
}

// recordedContainerd is what a real containerd held for a running
// container: the image record's target, its snapshot's parent, the
// content store's small blobs; and what the source read from it.
type recordedContainerd struct {
	Daemon string                   `json:"daemon"`
	Target ocispec.Descriptor       `json:"target"`
	Chain  digest.Digest            `json:"chain"`
	Blobs  map[digest.Digest][]byte `json:"blobs"`
	Want   *running.Observation     `json:"want"`
}

// recordedDocker is what a real dockerd answered (the JSON bodies by
// unversioned path, the API version it announced) and what the source
// read from it.
type recordedDocker struct {
	Daemon     string                     `json:"daemon"`
	APIVersion string                     `json:"apiVersion"`
	Answers    map[string]json.RawMessage `json:"answers"`
	Want       *running.Observation       `json:"want"`
}
