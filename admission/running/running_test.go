package running_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verdict"
)

var (
	config = "sha256:" + strings.Repeat("c", 64)
	index  = "sha256:" + strings.Repeat("1", 64)
)

// fast fails quickly against a dead dependency.
var fast = transport.Policy{MaxAttempts: 1}

func web() runningtest.Container {
	return runningtest.Container{
		ID: strings.Repeat("ab", 32), Name: "web", Reference: "127.0.0.1:5000/web:v1",
		ImageID: config, RepoDigests: []string{"127.0.0.1:5000/web@" + index}, OS: "linux", Arch: "arm64", Variant: "v8",
	}
}

func TestDocker(t *testing.T) {
	other := runningtest.Container{ID: strings.Repeat("cd", 32), Name: "sidecar", Reference: "busybox:latest",
		ImageID: "sha256:" + strings.Repeat("d", 64), OS: "linux", Arch: "amd64"}
	tagged := web()
	tagged.Name, tagged.ID, tagged.ImageID, tagged.RepoDigests = "tagged", strings.Repeat("ef", 32), "sha256:ABC", nil
	stopped := web()
	stopped.Name, stopped.ID, stopped.Stopped = "stopped", strings.Repeat("01", 32), true
	tests := []struct {
		name       string
		containers []runningtest.Container
		spec       string
		dflt       string
		wantID     string
		wantRepo   []string
		wantUnpin  []string
		wantSource string
		wantErr    error
	}{
		{name: "named", containers: []runningtest.Container{web(), other}, spec: "docker:web",
			wantID: config, wantRepo: []string{index}, wantSource: "docker:web"},
		{name: "by ID", containers: []runningtest.Container{web(), other}, spec: "docker:" + strings.Repeat("ab", 32),
			wantID: config, wantRepo: []string{index}, wantSource: "docker:web"},
		{name: "only one", containers: []runningtest.Container{web()}, spec: "docker",
			wantID: config, wantRepo: []string{index}, wantSource: "docker:web"},
		{name: "default name", containers: []runningtest.Container{other, web()}, spec: "docker", dflt: "web",
			wantID: config, wantRepo: []string{index}, wantSource: "docker:web"},
		{name: "ambiguous", containers: []runningtest.Container{web(), other}, spec: "docker", wantErr: running.ErrNoContainer},
		{name: "none", spec: "docker", wantErr: running.ErrNoContainer},
		{name: "missing", containers: []runningtest.Container{web()}, spec: "docker:api", wantErr: running.ErrNoContainer},
		{name: "not a digest", containers: []runningtest.Container{tagged}, spec: "docker:tagged", wantUnpin: []string{"sha256:ABC"}, wantSource: "docker:tagged"},
		{name: "stopped", containers: []runningtest.Container{stopped}, spec: "docker:stopped", wantErr: errors.New("not running")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, _ := runningtest.Docker(t, tt.containers...)
			src, err := running.Parse(tt.spec, running.Options{DockerHost: host, DefaultContainer: tt.dflt})
			if err != nil {
				t.Fatal(err)
			}
			o, err := src.Observe(context.Background())
			if tt.wantErr != nil {
				if err == nil || !errors.Is(err, tt.wantErr) && !strings.Contains(err.Error(), tt.wantErr.Error()) {
					t.Fatalf("Observe = %+v, %v; want error %v", o, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Observe: %v", err)
			}
			check(t, o, tt.wantSource, tt.wantID, tt.wantRepo, tt.wantUnpin)
			if tt.wantID != "" && o.Platform != "linux/arm64/v8" {
				t.Errorf("Platform = %q, want linux/arm64/v8", o.Platform)
			}
			if o.Reference != tt.containers[slices.IndexFunc(tt.containers, func(c runningtest.Container) bool { return "docker:"+c.Name == o.Source })].Reference {
				t.Errorf("Reference = %q", o.Reference)
			}
		})
	}
}

func check(t *testing.T, o *running.Observation, source, id string, repo, unpinned []string) {
	t.Helper()
	if o.Source != source {
		t.Errorf("Source = %q, want %q", o.Source, source)
	}
	if got := o.ImageID.String(); got != id {
		t.Errorf("ImageID = %q, want %q", got, id)
	}
	var gotRepo []string
	for _, d := range o.RepoDigests {
		gotRepo = append(gotRepo, d.String())
	}
	if !slices.Equal(gotRepo, repo) {
		t.Errorf("RepoDigests = %q, want %q", gotRepo, repo)
	}
	if !slices.Equal(o.Unpinned, unpinned) {
		t.Errorf("Unpinned = %q, want %q", o.Unpinned, unpinned)
	}
}

func TestDockerUnreachable(t *testing.T) {
	dir := t.TempDir()
	src, err := running.NewDocker("unix://"+filepath.Join(dir, "nope.sock"), "web", running.Options{Policy: fast})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Observe(context.Background())
	if !verdict.IsUnavailable(err) {
		t.Fatalf("Observe on a missing socket = %v, want an UnavailableError", err)
	}
}

func TestDockerHostRules(t *testing.T) {
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"", true},
		{"unix:///run/docker.sock", true},
		{"tcp://127.0.0.1:2375", true},
		{"tcp://[::1]:2375", true},
		{"tcp://10.0.0.5:2375", false},
		{"tcp://docker.example.com:2375", false},
		{"ssh://host", false},
		{"unix://", false},
	} {
		_, err := running.NewDocker(tt.host, "", running.Options{})
		if (err == nil) != tt.ok {
			t.Errorf("NewDocker(%q) error = %v, want ok=%v", tt.host, err, tt.ok)
		}
	}
}

func TestECS(t *testing.T) {
	app := web()
	app.Name = "app"
	agent := runningtest.Container{ID: "ff", Name: "lockstep", Reference: "lockstep:1", ImageID: "sha256:" + strings.Repeat("e", 64)}
	pending := web()
	pending.Name, pending.ImageID = "pending", ""
	uri := runningtest.ECS(t, "lockstep", app, agent, pending)
	one := runningtest.ECS(t, "app", app)
	tests := []struct {
		name, uri, spec, dflt string
		wantSource, wantID    string
		wantUnpin             []string
		wantErr               bool
	}{
		{name: "named", uri: uri, spec: "ecs:app", wantSource: "ecs:app", wantID: config},
		{name: "default", uri: uri, spec: "ecs", dflt: "app", wantSource: "ecs:app", wantID: config},
		{name: "self when several", uri: uri, spec: "ecs", wantSource: "ecs:lockstep", wantID: agent.ImageID},
		{name: "only one", uri: one, spec: "ecs", wantSource: "ecs:app", wantID: config},
		{name: "tag only", uri: uri, spec: "ecs:pending", wantSource: "ecs:pending", wantUnpin: []string{app.Reference}},
		{name: "missing", uri: uri, spec: "ecs:api", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := running.Parse(tt.spec, running.Options{ECSMetadataURI: tt.uri, DefaultContainer: tt.dflt})
			if err != nil {
				t.Fatal(err)
			}
			o, err := src.Observe(context.Background())
			if tt.wantErr {
				if !errors.Is(err, running.ErrNoContainer) {
					t.Fatalf("Observe = %+v, %v; want ErrNoContainer", o, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			check(t, o, tt.wantSource, tt.wantID, nil, tt.wantUnpin)
		})
	}
	var oe *verdict.OptionError
	if _, err := running.Parse("ecs", running.Options{}); !errors.As(err, &oe) || oe.Option != "spec" {
		t.Errorf("Parse(ecs) without ECS_CONTAINER_METADATA_URI_V4 = %v, want an OptionError of spec", err)
	}
	src, _ := running.Parse("ecs:app", running.Options{ECSMetadataURI: "http://127.0.0.1:1/v4/x", Policy: fast})
	if _, err := src.Observe(context.Background()); !verdict.IsUnavailable(err) {
		t.Errorf("Observe on a dead endpoint = %v, want an UnavailableError", err)
	}
}

func TestFileAndGiven(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		spec      string
		wantID    string
		wantUnpin []string
		wantErr   bool
	}{
		{spec: "file:" + write("id", config+"\n"), wantID: config},
		{spec: "file:" + write("ref", "127.0.0.1:5000/web@"+index+"\n"), wantID: index},
		{spec: "file:" + write("tag", "127.0.0.1:5000/web:v1\n"), wantUnpin: []string{"127.0.0.1:5000/web:v1"}},
		{spec: "file:" + write("empty", "\n"), wantErr: true},
		{spec: "file:" + filepath.Join(dir, "missing"), wantErr: true},
		{spec: "digest:" + config, wantID: config},
		{spec: "digest:sha256:ABC", wantUnpin: []string{"sha256:ABC"}},
		{spec: "digest:" + strings.ToUpper(config), wantUnpin: []string{strings.ToUpper(config)}},
	}
	for _, tt := range tests {
		src, err := running.Parse(tt.spec, running.Options{})
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.spec, err)
		}
		o, err := src.Observe(context.Background())
		if (err != nil) != tt.wantErr {
			t.Fatalf("Observe(%q) error = %v, want error %v", tt.spec, err, tt.wantErr)
		}
		if err != nil {
			continue
		}
		if got := o.ImageID.String(); got != tt.wantID {
			t.Errorf("Observe(%q).ImageID = %q, want %q", tt.spec, got, tt.wantID)
		}
		if !slices.Equal(o.Unpinned, tt.wantUnpin) {
			t.Errorf("Observe(%q).Unpinned = %q, want %q", tt.spec, o.Unpinned, tt.wantUnpin)
		}
	}
	for _, bad := range []string{"", "k8s", "file:", "digest:"} {
		var oe *verdict.OptionError
		if _, err := running.Parse(bad, running.Options{}); !errors.As(err, &oe) || oe.Option != "spec" {
			t.Errorf("Parse(%q) = %v, want an OptionError of spec", bad, err)
		}
	}
	for _, bad := range []string{"containerd:/web", "containerd:a/b/c", "cri:/web", "cri:a/b/c"} {
		if _, err := running.Parse(bad, running.Options{}); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	// Their APIs have no authentication: a unix socket only.
	for _, opt := range []running.Options{{ContainerdAddress: "tcp://127.0.0.1:1"}, {CRIEndpoint: "127.0.0.1:1"}} {
		for _, spec := range []string{"containerd:web", "cri:web"} {
			if _, err := running.Parse(spec, opt); err == nil && (opt.ContainerdAddress != "") == strings.HasPrefix(spec, "containerd") {
				t.Errorf("Parse(%q, %+v) succeeded", spec, opt)
			}
		}
	}
}

// TestDockerTCP reads the fake daemon over a loopback tcp DOCKER_HOST
// (the client library's tcp path, beside the unix socket of TestDocker).
func TestDockerTCP(t *testing.T) {
	srv := httptest.NewServer(runningtest.DockerHandler(nil, web()))
	defer srv.Close()
	src, err := running.Parse("docker:web", running.Options{DockerHost: "tcp://" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	o, err := src.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	check(t, o, "docker:web", config, []string{index}, nil)
}
