package running

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultDockerHost is where the Docker Engine API listens by default.
const DefaultDockerHost = "unix:///var/run/docker.sock"

// maxAPIVersion is the newest Docker Engine API version this client
// speaks; older daemons are addressed in their own version.
const maxAPIVersion = "1.47"

// maxBody bounds one API response.
const maxBody = 4 << 20

// ErrNoContainer is returned (wrapped) when the container asked for does
// not exist, or when none was named and there is not exactly one.
var ErrNoContainer = errors.New("no such container")

// ErrAmbiguous is returned (wrapped) when no container was named and
// several run. It wraps ErrNoContainer; unlike a container that does not
// exist yet, waiting does not resolve it.
var ErrAmbiguous = fmt.Errorf("several containers, none named: %w", ErrNoContainer)

// ErrNotRunning is returned (wrapped) when the container exists but is not
// running (created, restarting, exited).
var ErrNotRunning = errors.New("container not running")

// Docker reads a container's image from the Docker Engine API: GET
// /containers/{id}/json for the image ID, GET /images/{id}/json for the
// repo digests and platform.
type Docker struct {
	// Container is a name or ID. Empty means Default if such a container
	// runs, else the only running container.
	Container string
	Default   string
	host      string
	base      string
	client    *transport.Client
}

var _ Source = (*Docker)(nil)

// NewDocker returns the Docker source for host (DOCKER_HOST: unix:///path
// or tcp://HOST:PORT with a loopback HOST; empty means
// DefaultDockerHost). A tcp host that is not loopback is refused: the API
// has no authentication.
func NewDocker(host, container string, opt Options) (*Docker, error) {
	if host == "" {
		host = DefaultDockerHost
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("DOCKER_HOST %q: %w", host, err)
	}
	d := &Docker{Container: container, Default: opt.DefaultContainer, host: host}
	switch u.Scheme {
	case "unix":
		path := u.Path
		if path == "" {
			return nil, fmt.Errorf("DOCKER_HOST %q: no socket path", host)
		}
		var dialer net.Dialer
		dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", path)
		}
		d.client = transport.New(opt.Policy, transport.WithDialContext(dial))
		d.base = "http://docker"
	case "tcp", "http":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("DOCKER_HOST %q: only a unix socket or a loopback tcp address is accepted", host)
		}
		d.client = transport.New(opt.Policy)
		d.base = "http://" + u.Host
	default:
		return nil, fmt.Errorf("DOCKER_HOST %q: want unix:///path or tcp://127.0.0.1:PORT", host)
	}
	return d, nil
}

// The parts of the Engine API's answers that are read.
type (
	dockerContainer struct {
		ID     string `json:"Id"`
		Name   string `json:"Name"`
		Image  string `json:"Image"`
		Config struct {
			Image string `json:"Image"`
		} `json:"Config"`
		State struct {
			Status  string `json:"Status"`
			Running bool   `json:"Running"`
		} `json:"State"`
	}
	dockerSummary struct {
		ID    string   `json:"Id"`
		Names []string `json:"Names"`
		Image string   `json:"Image"`
		State string   `json:"State"`
	}
	dockerImage struct {
		ID           string   `json:"Id"`
		RepoDigests  []string `json:"RepoDigests"`
		Os           string   `json:"Os"`
		Architecture string   `json:"Architecture"`
		Variant      string   `json:"Variant"`
	}
)

// Observe asks the daemon. An unreachable daemon, or one answering with
// an error status, is an *verdict.UnavailableError; a container that does
// not exist wraps ErrNoContainer.
func (d *Docker) Observe(ctx context.Context) (*Observation, error) {
	prefix, err := d.version(ctx)
	if err != nil {
		return nil, err
	}
	id := d.Container
	if id == "" {
		if id, err = d.pick(ctx, prefix); err != nil {
			return nil, err
		}
	}
	var c dockerContainer
	if err := d.get(ctx, prefix+"/containers/"+url.PathEscape(id)+"/json", &c); err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(c.Name, "/")
	if !c.State.Running {
		return nil, fmt.Errorf("container %s is not running (state %q): %w", name, c.State.Status, ErrNotRunning)
	}
	o := &Observation{Source: "docker:" + name, Container: name, Reference: c.Config.Image}
	o.addImageID(c.Image)
	if c.Image == "" {
		return o, nil
	}
	var im dockerImage
	if err := d.get(ctx, prefix+"/images/"+url.PathEscape(c.Image)+"/json", &im); err != nil {
		return nil, err
	}
	for _, rd := range im.RepoDigests {
		o.addRepoDigest(rd)
	}
	if im.Os != "" && im.Architecture != "" {
		o.Platform = im.Os + "/" + im.Architecture
		if im.Variant != "" {
			o.Platform += "/" + im.Variant
		}
	}
	return o, nil
}

// version pings the daemon and returns the path prefix of the API
// version to speak: the daemon's, capped at maxAPIVersion.
func (d *Docker) version(ctx context.Context) (string, error) {
	resp, err := d.do(ctx, "/_ping")
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", verdict.Unavailable("docker "+d.host, fmt.Errorf("GET /_ping: %s", resp.Status))
	}
	v := resp.Header.Get("Api-Version")
	if v == "" {
		return "", nil
	}
	if versionLess(maxAPIVersion, v) {
		v = maxAPIVersion
	}
	return "/v" + v, nil
}

// pick returns the container to observe when none was named.
func (d *Docker) pick(ctx context.Context, prefix string) (string, error) {
	var list []dockerSummary
	if err := d.get(ctx, prefix+"/containers/json", &list); err != nil {
		return "", err
	}
	var names []string
	for _, c := range list {
		for _, n := range c.Names {
			n = strings.TrimPrefix(n, "/")
			if d.Default != "" && n == d.Default {
				return c.ID, nil
			}
		}
		if len(c.Names) > 0 {
			names = append(names, strings.TrimPrefix(c.Names[0], "/"))
		}
	}
	switch len(list) {
	case 1:
		return list[0].ID, nil
	case 0:
		return "", fmt.Errorf("docker %s: no running container: %w", d.host, ErrNoContainer)
	}
	return "", fmt.Errorf("docker %s: %d containers run (%s); name one as docker:NAME: %w",
		d.host, len(list), strings.Join(names, ", "), ErrAmbiguous)
}

func (d *Docker) do(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := d.client.HTTPClient().Do(req)
	if err != nil {
		return nil, verdict.Unavailable("docker "+d.host, err)
	}
	return resp, nil
}

// get decodes the JSON answer to GET path into v.
func (d *Docker) get(ctx context.Context, path string, v any) error {
	resp, err := d.do(ctx, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return verdict.Unavailable("docker "+d.host, fmt.Errorf("GET %s: %w", path, err))
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("docker %s: GET %s: %s: %w", d.host, path, apiMessage(body), ErrNoContainer)
	case resp.StatusCode != http.StatusOK:
		return verdict.Unavailable("docker "+d.host, fmt.Errorf("GET %s: %s: %s", path, resp.Status, apiMessage(body)))
	case len(body) > maxBody:
		return verdict.Unavailable("docker "+d.host, fmt.Errorf("GET %s: answer over %d bytes", path, maxBody))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return verdict.Unavailable("docker "+d.host, fmt.Errorf("GET %s: decoding: %w", path, err))
	}
	return nil
}

// apiMessage returns the "message" of an Engine API error body.
func apiMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return e.Message
	}
	return strings.TrimSpace(string(body[:min(len(body), 200)]))
}

// versionLess compares API versions "1.43" < "1.47".
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
