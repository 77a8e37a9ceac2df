package running

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"
	"github.com/containerd/platforms"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/identity"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultContainerdAddress is containerd's default socket.
const DefaultContainerdAddress = "/run/containerd/containerd.sock"

// DefaultContainerdNamespace is the namespace of a containerd spec that
// names none (ctr's and nerdctl's default; Kubernetes uses "k8s.io").
const DefaultContainerdNamespace = "default"

// maxBlob bounds one manifest, index or config blob read from the content
// store.
const maxBlob = 4 << 20

// ErrImageChanged is returned (wrapped) when the container's root
// filesystem is not built from any platform of the image its record
// names: the name was re-pointed (re-tagged, re-pulled) after the
// container was created, so the image record does not say what runs.
var ErrImageChanged = errors.New("the container's root filesystem is not from its image's current content")

// Containerd reads a container's image through containerd's own client:
// the container record, its task's status, the image record it names,
// and, from the content store, the index, manifest and config of the
// platform the container's root filesystem (its snapshot's parent, a
// chain of the config's layers) was unpacked from.
type Containerd struct {
	// Address is containerd's socket path.
	Address string
	// Namespace is the containerd namespace (DefaultContainerdNamespace
	// when empty).
	Namespace string
	// Container is the container ID. Empty means Default if such a
	// container runs, else the only running container.
	Container string
	Default   string
}

var _ Source = (*Containerd)(nil)

// NewContainerd returns the containerd source for spec
// "[NAMESPACE/][CONTAINER]" on address (a socket path or unix:///path;
// empty means DefaultContainerdAddress).
func NewContainerd(address, spec string, opt Options) (*Containerd, error) {
	path, err := socketPath("containerd", address, DefaultContainerdAddress)
	if err != nil {
		return nil, err
	}
	ns, id, err := splitScope("containerd", spec, "[NAMESPACE/]CONTAINER")
	if err != nil {
		return nil, err
	}
	if ns == "" {
		ns = DefaultContainerdNamespace
	}
	return &Containerd{Address: path, Namespace: ns, Container: id, Default: opt.DefaultContainer}, nil
}

// splitScope splits spec "[SCOPE/]NAME" (form, for the error) of a kind
// of source; "SCOPE/" alone names the scope and no container.
func splitScope(kind, spec, form string) (scope, name string, err error) {
	scope, name, ok := strings.Cut(spec, "/")
	if !ok {
		return "", spec, nil
	}
	if scope == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%s:%s: want %s", kind, spec, form)
	}
	return scope, name, nil
}

// socketPath returns the socket path of address (a path or
// unix:///path), or def when address is empty. Only unix sockets are
// accepted: these APIs have no authentication.
func socketPath(what, address, def string) (string, error) {
	if address == "" {
		return def, nil
	}
	if p, ok := strings.CutPrefix(address, "unix://"); ok {
		address = p
	}
	if !strings.HasPrefix(address, "/") {
		return "", fmt.Errorf("%s address %q: want a unix socket path (/path or unix:///path)", what, address)
	}
	return address, nil
}

// reach dials the socket once, so that an absent or refusing daemon is an
// *verdict.UnavailableError that keeps the dial's cause (ENOENT,
// ECONNREFUSED: a runtime not up yet), rather than a gRPC status that
// keeps only its text.
func reach(ctx context.Context, what, path string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return verdict.Unavailable(what, err)
	}
	return conn.Close()
}

func (c *Containerd) dependency() string { return "containerd " + c.Address }

// Observe asks containerd. An unreachable daemon, or one answering with
// an error, is an *verdict.UnavailableError; a container that does not
// exist wraps ErrNoContainer, one without a running task ErrNotRunning,
// and one whose image record no longer describes its root filesystem
// ErrImageChanged.
func (c *Containerd) Observe(ctx context.Context) (*Observation, error) {
	if err := reach(ctx, c.dependency(), c.Address); err != nil {
		return nil, err
	}
	client, err := containerd.New(c.Address, containerd.WithDefaultNamespace(c.Namespace))
	if err != nil {
		return nil, verdict.Unavailable(c.dependency(), err)
	}
	defer client.Close()
	ctx = namespaces.WithNamespace(ctx, c.Namespace)
	id := c.Container
	if id == "" {
		if id, err = c.pick(ctx, client); err != nil {
			return nil, err
		}
	}
	info, err := client.ContainerService().Get(ctx, id)
	if err != nil {
		return nil, c.translate(fmt.Sprintf("container %s/%s", c.Namespace, id), err)
	}
	if err := c.running(ctx, client, id); err != nil {
		return nil, err
	}
	o := &Observation{Source: "containerd:" + c.Namespace + "/" + id, Container: id, Reference: info.Image}
	if info.Image == "" {
		return o, nil
	}
	img, err := client.ImageService().Get(ctx, info.Image)
	if err != nil {
		if errdefs.IsNotFound(err) {
			// The image record is gone: only its name is known.
			o.Unpinned = append(o.Unpinned, info.Image)
			return o, nil
		}
		return nil, c.translate("image "+info.Image, err)
	}
	var chain digest.Digest
	if info.SnapshotKey != "" && info.Snapshotter != "" {
		si, err := client.SnapshotService(info.Snapshotter).Stat(ctx, info.SnapshotKey)
		if err != nil {
			return nil, c.translate("snapshot "+info.SnapshotKey, err)
		}
		chain = digest.Digest(si.Parent)
	}
	cs := client.ContentStore()
	pm, err := resolvePlatform(ctx, cs, img.Target, chain)
	if err != nil {
		if errors.Is(err, ErrImageChanged) {
			return nil, fmt.Errorf("containerd %s/%s: image %s is now %s: %w", c.Namespace, id, info.Image, img.Target.Digest, err)
		}
		return nil, c.translate("image "+info.Image, err)
	}
	o.addRepoDigest(img.Target.Digest.String())
	o.addRepoDigest(pm.manifest.String())
	o.addImageID(pm.config.String())
	o.Platform = pm.platform
	return o, nil
}

// running returns nil when container id has a running task.
func (c *Containerd) running(ctx context.Context, client *containerd.Client, id string) error {
	ctr, err := client.LoadContainer(ctx, id)
	if err != nil {
		return c.translate("container "+id, err)
	}
	task, err := ctr.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return fmt.Errorf("containerd %s/%s: created, no task started: %w", c.Namespace, id, ErrNotRunning)
	}
	if err != nil {
		return c.translate("task "+id, err)
	}
	st, err := task.Status(ctx)
	if err != nil {
		return c.translate("task "+id, err)
	}
	if st.Status != containerd.Running {
		return fmt.Errorf("containerd %s/%s: task %s: %w", c.Namespace, id, st.Status, ErrNotRunning)
	}
	return nil
}

// pick returns the container to observe when none was named: Default if
// it runs, else the only running one.
func (c *Containerd) pick(ctx context.Context, client *containerd.Client) (string, error) {
	list, err := client.Containers(ctx)
	if err != nil {
		return "", c.translate("containers", err)
	}
	var ids []string
	for _, ctr := range list {
		if c.running(ctx, client, ctr.ID()) != nil {
			continue
		}
		if c.Default != "" && ctr.ID() == c.Default {
			return ctr.ID(), nil
		}
		ids = append(ids, ctr.ID())
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return "", fmt.Errorf("%s: no running container in namespace %s: %w", c.dependency(), c.Namespace, ErrNoContainer)
	}
	return "", fmt.Errorf("%s: %d containers run in namespace %s (%s); name one as containerd:%s/ID: %w",
		c.dependency(), len(ids), c.Namespace, strings.Join(ids, ", "), c.Namespace, ErrAmbiguous)
}

// translate maps a containerd error about what: not found wraps
// ErrNoContainer, anything else is the daemon failing to answer.
func (c *Containerd) translate(what string, err error) error {
	if errdefs.IsNotFound(err) {
		return fmt.Errorf("containerd %s: %s: %v: %w", c.Namespace, what, err, ErrNoContainer)
	}
	return verdict.Unavailable(c.dependency(), fmt.Errorf("%s: %w", what, err))
}

// platformImage is one platform's image in an index (or a lone manifest).
type platformImage struct {
	manifest, config digest.Digest
	platform         string
}

// resolvePlatform finds, under target (an index or a manifest), the
// platform image whose layers chain to chain, the parent of the
// container's snapshot. Without a chain (a container without a
// snapshot) it takes the platform containerd would, this host's. Blobs
// the store lacks (platforms never pulled) are skipped; when none chains
// to chain the error wraps ErrImageChanged.
func resolvePlatform(ctx context.Context, cs content.Provider, target ocispec.Descriptor, chain digest.Digest) (*platformImage, error) {
	var candidates []ocispec.Descriptor
	switch target.MediaType {
	case ocispec.MediaTypeImageIndex, images.MediaTypeDockerSchema2ManifestList:
		var idx ocispec.Index
		if err := readJSON(ctx, cs, target, &idx); err != nil {
			return nil, err
		}
		for _, m := range idx.Manifests {
			if m.Platform != nil && m.Platform.OS != "unknown" {
				candidates = append(candidates, m)
			}
		}
		if chain == "" {
			candidates = bestPlatform(candidates)
		}
	case ocispec.MediaTypeImageManifest, images.MediaTypeDockerSchema2Manifest:
		candidates = []ocispec.Descriptor{target}
	default:
		return nil, fmt.Errorf("image target %s has media type %q, neither an index nor a manifest", target.Digest, target.MediaType)
	}
	for _, desc := range candidates {
		var m ocispec.Manifest
		if err := readJSON(ctx, cs, desc, &m); err != nil {
			if errdefs.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		var cfg ocispec.Image
		if err := readJSON(ctx, cs, m.Config, &cfg); err != nil {
			if errdefs.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		if chain != "" && identity.ChainID(cfg.RootFS.DiffIDs) != chain {
			continue
		}
		p := cfg.Platform
		if desc.Platform != nil && p.Variant == "" {
			p.Variant = desc.Platform.Variant
		}
		pi := &platformImage{manifest: desc.Digest, config: m.Config.Digest}
		if p.OS != "" && p.Architecture != "" {
			pi.platform = p.OS + "/" + p.Architecture
			if p.Variant != "" {
				pi.platform += "/" + p.Variant
			}
		}
		return pi, nil
	}
	if chain == "" {
		return nil, fmt.Errorf("image %s: no manifest for this host's platform %s in the content store: %w", target.Digest, platforms.DefaultString(), errdefs.ErrNotFound)
	}
	return nil, fmt.Errorf("snapshot parent %s chains from none of its platforms' layers: %w", chain, ErrImageChanged)
}

// bestPlatform returns the descriptor containerd would pick for this host,
// or none.
func bestPlatform(ds []ocispec.Descriptor) []ocispec.Descriptor {
	m := platforms.Default()
	var best *ocispec.Descriptor
	for i := range ds {
		if !m.Match(*ds[i].Platform) {
			continue
		}
		if best == nil || m.Less(*ds[i].Platform, *best.Platform) {
			best = &ds[i]
		}
	}
	if best == nil {
		return nil
	}
	return []ocispec.Descriptor{*best}
}

// readJSON reads blob desc from the store, capped at maxBlob, checks its
// digest, and decodes it into v.
func readJSON(ctx context.Context, cs content.Provider, desc ocispec.Descriptor, v any) error {
	if desc.Size > maxBlob {
		return fmt.Errorf("blob %s: %d bytes, over %d", desc.Digest, desc.Size, maxBlob)
	}
	b, err := content.ReadBlob(ctx, cs, desc)
	if err != nil {
		return err
	}
	if err := desc.Digest.Validate(); err != nil {
		return fmt.Errorf("blob %s: %w", desc.Digest, err)
	}
	if got := desc.Digest.Algorithm().FromBytes(b); got != desc.Digest {
		return fmt.Errorf("blob %s: content hashes to %s", desc.Digest, got)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("blob %s: decoding: %w", desc.Digest, err)
	}
	return nil
}
