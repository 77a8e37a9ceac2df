package running

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultDockerHost is where the Docker Engine API listens by default.
const DefaultDockerHost = "unix:///var/run/docker.sock"

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

// Docker reads a container's image from the Docker Engine API through
// the Engine's own client library (github.com/moby/moby/client, which
// negotiates the API version, 1.40 or later: Docker 19.03 on): the
// container's inspect for the image ID, the image's for the repo digests
// and platform.
type Docker struct {
	// Container is a name or ID. Empty means Default if such a container
	// runs, else the only running container.
	Container string
	Default   string
	host      string
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
	case "tcp", "http":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("DOCKER_HOST %q: only a unix socket or a loopback tcp address is accepted", host)
		}
		d.client = transport.New(opt.Policy)
	default:
		return nil, fmt.Errorf("DOCKER_HOST %q: want unix:///path or tcp://127.0.0.1:PORT", host)
	}
	return d, nil
}

// Observe asks the daemon through its own client library. An
// unreachable daemon, or one answering with an error status, is an
// *verdict.UnavailableError; a container that does not exist wraps
// ErrNoContainer.
func (d *Docker) Observe(ctx context.Context) (*Observation, error) {
	if err := d.reach(ctx); err != nil {
		return nil, err
	}
	cli, err := client.New(client.WithHost(d.host), client.WithHTTPClient(d.client.HTTPClient()))
	if err != nil {
		return nil, verdict.Unavailable("docker "+d.host, err)
	}
	defer cli.Close()
	id := d.Container
	if id == "" {
		if id, err = d.pick(ctx, cli); err != nil {
			return nil, err
		}
	}
	res, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, d.translate("container "+id, err)
	}
	c := res.Container
	name := strings.TrimPrefix(c.Name, "/")
	if c.State == nil || !c.State.Running {
		st := ""
		if c.State != nil {
			st = string(c.State.Status)
		}
		return nil, fmt.Errorf("container %s is not running (state %q): %w", name, st, ErrNotRunning)
	}
	o := &Observation{Source: "docker:" + name, Container: name}
	if c.Config != nil {
		o.Reference = c.Config.Image
	}
	o.addImageID(c.Image)
	if c.Image == "" {
		return o, nil
	}
	im, err := cli.ImageInspect(ctx, c.Image)
	if err != nil {
		return nil, d.translate("image "+c.Image, err)
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

// reach dials the daemon once, so that an absent or refusing one keeps
// its cause (ENOENT, ECONNREFUSED: not up yet), which the client library
// drops.
func (d *Docker) reach(ctx context.Context) error {
	u, _ := url.Parse(d.host)
	network, addr := "tcp", u.Host
	if u.Scheme == "unix" {
		network, addr = "unix", u.Path
	}
	var dl net.Dialer
	conn, err := dl.DialContext(ctx, network, addr)
	if err != nil {
		return verdict.Unavailable("docker "+d.host, err)
	}
	return conn.Close()
}

// pick returns the container to observe when none was named.
func (d *Docker) pick(ctx context.Context, cli *client.Client) (string, error) {
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{})
	if err != nil {
		return "", d.translate("containers", err)
	}
	list := res.Items
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

// translate maps a client error about what ("container NAME", "image
// ID"): not found says "no such container NAME" (a *notFoundError, which
// is ErrNoContainer), anything else is the daemon failing to answer.
func (d *Docker) translate(what string, err error) error {
	if errdefs.IsNotFound(err) {
		return fmt.Errorf("docker %s: %w", d.host, &notFoundError{what: what, err: err})
	}
	return verdict.Unavailable("docker "+d.host, fmt.Errorf("%s: %w", what, err))
}

// notFoundError is the daemon's answer that it has no such container (or
// image): "no such container acme-wbe", the cause a user who mistyped a
// name must read; errors.Is(err, ErrNoContainer) holds, and Unwrap
// returns the daemon's own error.
type notFoundError struct {
	what string
	err  error
}

func (e *notFoundError) Error() string        { return "no such " + e.what }
func (e *notFoundError) Is(target error) bool { return target == ErrNoContainer }
func (e *notFoundError) Unwrap() error        { return e.err }
