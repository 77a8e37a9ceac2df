package running

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// Source reports what is running. Observe returns an
// *verdict.UnavailableError when the runtime cannot be reached or does not
// answer usably, and another error (a container that does not exist or is
// not running, an ambiguous choice) when it answers but cannot say.
type Source interface {
	Observe(ctx context.Context) (*Observation, error)
}

// Observation is what a runtime reported about the image of one container.
type Observation struct {
	// Source names the backend and container, e.g. "docker:web".
	Source string `json:"source"`
	// Container is the container's name or ID, where there is one.
	Container string `json:"container,omitempty"`
	// Reference is the image reference the container was started from, as
	// the runtime reports it, e.g. "registry.example.com/web:v1". It is
	// informational: a tag proves nothing.
	Reference string `json:"reference,omitempty"`
	// ImageID is the runtime's identity of the image it runs: the config
	// digest for Docker's classic store and ECS, the manifest or index
	// digest for containerd's image store. Zero when not reported.
	ImageID manifest.Digest `json:"imageID,omitzero"`
	// RepoDigests are the registry digests the image was pulled by (the
	// index or platform manifest digest).
	RepoDigests []manifest.Digest `json:"repoDigests,omitempty"`
	// Platform is the image's os/arch[/variant], where the runtime says.
	Platform string `json:"platform,omitempty"`
	// Unpinned holds every reported value that should have been a digest
	// and is not: a tag, a truncated or upper-case digest.
	Unpinned []string `json:"unpinned,omitempty"`
}

// Digests returns every parsed digest observed, ImageID first.
func (o *Observation) Digests() []manifest.Digest {
	var out []manifest.Digest
	if !o.ImageID.IsZero() {
		out = append(out, o.ImageID)
	}
	return append(out, o.RepoDigests...)
}

// addImageID records v as the image ID, or as unpinned.
func (o *Observation) addImageID(v string) {
	if v == "" {
		return
	}
	if d, ok := digestOf(v); ok {
		o.ImageID = d
		return
	}
	o.Unpinned = append(o.Unpinned, v)
}

// addRepoDigest records v ("repo@sha256:..." or a bare digest) as a repo
// digest, or as unpinned.
func (o *Observation) addRepoDigest(v string) {
	if v == "" {
		return
	}
	if d, ok := digestOf(v); ok {
		for _, have := range o.RepoDigests {
			if have == d {
				return
			}
		}
		o.RepoDigests = append(o.RepoDigests, d)
		return
	}
	o.Unpinned = append(o.Unpinned, v)
}

// digestOf parses v as a canonical digest, or the digest part of
// "name@digest".
func digestOf(v string) (manifest.Digest, bool) {
	v = strings.TrimSpace(v)
	if i := strings.LastIndexByte(v, '@'); i >= 0 {
		v = v[i+1:]
	}
	d, err := manifest.ParseDigest(v)
	return d, err == nil
}

// Options configure the sources Parse builds.
type Options struct {
	// DockerHost is DOCKER_HOST: unix:///path or tcp://127.0.0.1:PORT.
	// Empty means unix:///var/run/docker.sock.
	DockerHost string
	// ContainerdAddress is containerd's socket (CONTAINERD_ADDRESS): a
	// path or unix:///path. Empty means DefaultContainerdAddress.
	ContainerdAddress string
	// CRIEndpoint is the CRI socket (CONTAINER_RUNTIME_ENDPOINT): a path
	// or unix:///path. Empty means DefaultCRIEndpoint.
	CRIEndpoint string
	// ECSMetadataURI is ECS_CONTAINER_METADATA_URI_V4.
	ECSMetadataURI string
	// DefaultContainer is the container looked for when the spec names
	// none (the CLI passes the --image role), before falling back to the
	// only container there is.
	DefaultContainer string
	// Policy is the network policy of the runtime's API; zero fields take
	// the defaults.
	Policy transport.Policy
	// Client, if set, is used for the ECS endpoint (Docker needs a client
	// of its own, dialling its socket).
	Client *transport.Client
}

// Parse builds the source a spec names:
//
//	docker[:CONTAINER]                   the Docker Engine API (DockerHost)
//	containerd[:[NAMESPACE/]CONTAINER]   containerd's API (ContainerdAddress)
//	cri[:[POD/]CONTAINER]                the CRI API (CRIEndpoint)
//	ecs[:CONTAINER]                      the ECS task metadata endpoint v4
//	file:PATH                            a file holding a digest (or name@digest)
//	digest:sha256:HEX                    a digest given explicitly
//
// An unknown or incomplete spec is a *verdict.OptionError of "spec"
// (ecs without Options.ECSMetadataURI is incomplete).
func Parse(spec string, opt Options) (Source, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "docker":
		return NewDocker(opt.DockerHost, arg, opt)
	case "containerd":
		return NewContainerd(opt.ContainerdAddress, arg, opt)
	case "cri":
		return NewCRI(opt.CRIEndpoint, arg, opt)
	case "ecs":
		if opt.ECSMetadataURI == "" {
			return nil, &verdict.OptionError{Option: "spec", Reason: "ecs: ECS_CONTAINER_METADATA_URI_V4 is not set (not on ECS?)"}
		}
		client := opt.Client
		if client == nil {
			client = transport.New(opt.Policy)
		}
		return &ECS{URI: opt.ECSMetadataURI, Container: arg, Default: opt.DefaultContainer, Client: client}, nil
	case "file":
		if arg == "" {
			return nil, &verdict.OptionError{Option: "spec", Reason: "file:PATH: no path"}
		}
		return File{Path: arg}, nil
	case "digest":
		if arg == "" {
			return nil, &verdict.OptionError{Option: "spec", Reason: "digest:sha256:HEX: no digest"}
		}
		return Given{Value: arg}, nil
	}
	return nil, &verdict.OptionError{Option: "spec", Reason: fmt.Sprintf("%q: want docker[:CONTAINER], containerd[:[NAMESPACE/]CONTAINER], cri[:[POD/]CONTAINER], ecs[:CONTAINER], file:PATH or digest:sha256:HEX", spec)}
}

// isLoopback reports whether host (without port) is a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// joinURL appends path elements to base, escaping each.
func joinURL(base string, elems ...string) string {
	u := strings.TrimSuffix(base, "/")
	for _, e := range elems {
		u += "/" + url.PathEscape(e)
	}
	return u
}
