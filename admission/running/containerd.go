package running

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	containersapi "github.com/containerd/containerd/api/services/containers/v1"
	contentapi "github.com/containerd/containerd/api/services/content/v1"
	imagesapi "github.com/containerd/containerd/api/services/images/v1"
	snapshotsapi "github.com/containerd/containerd/api/services/snapshots/v1"
	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/api/types/task"
	"github.com/containerd/errdefs"
	"github.com/containerd/platforms"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/identity"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

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

// Containerd reads a container's image through containerd's gRPC API
// (the services ctr and containerd's own client call): the container
// record, its task's status, the image record it names, and, from the
// content store, the index, manifest and config of the platform the
// container's root filesystem (its snapshot's parent, a chain of the
// config's layers) was unpacked from.
//
// It speaks to the API's generated stubs, not through containerd's client
// package: that package links about a hundred more packages (and their
// init work) into every lockstep command, which every boot pays.
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

// Docker's media types for a manifest list and a manifest, which
// containerd stores as pulled.
const (
	mediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaTypeDockerManifest     = "application/vnd.docker.distribution.manifest.v2+json"
)

// containerdAPI is a connection to containerd's gRPC services, with the
// namespace set on every call's context.
type containerdAPI struct {
	containers containersapi.ContainersClient
	tasks      tasksapi.TasksClient
	images     imagesapi.ImagesClient
	snapshots  snapshotsapi.SnapshotsClient
	content    contentapi.ContentClient
}

// Observe asks containerd. An unreachable daemon, or one answering with
// an error, is an *verdict.UnavailableError; a container that does not
// exist wraps ErrNoContainer, one without a running task ErrNotRunning,
// and one whose image record no longer describes its root filesystem
// ErrImageChanged.
func (c *Containerd) Observe(ctx context.Context) (*Observation, error) {
	if err := reach(ctx, c.dependency(), c.Address); err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("unix://"+c.Address, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxBody)))
	if err != nil {
		return nil, verdict.Unavailable(c.dependency(), err)
	}
	defer conn.Close()
	api := &containerdAPI{
		containers: containersapi.NewContainersClient(conn),
		tasks:      tasksapi.NewTasksClient(conn),
		images:     imagesapi.NewImagesClient(conn),
		snapshots:  snapshotsapi.NewSnapshotsClient(conn),
		content:    contentapi.NewContentClient(conn),
	}
	ctx = withNamespace(ctx, c.Namespace)
	id := c.Container
	if id == "" {
		if id, err = c.pick(ctx, api); err != nil {
			return nil, err
		}
	}
	got, err := api.containers.Get(ctx, &containersapi.GetContainerRequest{ID: id})
	if err != nil {
		return nil, c.translate(fmt.Sprintf("container %s/%s", c.Namespace, id), err)
	}
	info := got.GetContainer()
	if err := c.running(ctx, api, id); err != nil {
		return nil, err
	}
	o := &Observation{Source: "containerd:" + c.Namespace + "/" + id, Container: id, Reference: info.GetImage()}
	if info.GetImage() == "" {
		return o, nil
	}
	img, err := api.images.Get(ctx, &imagesapi.GetImageRequest{Name: info.GetImage()})
	if err != nil {
		if notFound(err) {
			// The image record is gone: only its name is known.
			o.Unpinned = append(o.Unpinned, info.GetImage())
			return o, nil
		}
		return nil, c.translate("image "+info.GetImage(), err)
	}
	t := img.GetImage().GetTarget()
	target := ocispec.Descriptor{MediaType: t.GetMediaType(), Digest: digest.Digest(t.GetDigest()), Size: t.GetSize(), Annotations: t.GetAnnotations()}
	if err := target.Digest.Validate(); err != nil {
		return nil, c.translate("image "+info.GetImage(), fmt.Errorf("target digest: %w", err))
	}
	var chain digest.Digest
	if info.GetSnapshotKey() != "" && info.GetSnapshotter() != "" {
		si, err := api.snapshots.Stat(ctx, &snapshotsapi.StatSnapshotRequest{Snapshotter: info.GetSnapshotter(), Key: info.GetSnapshotKey()})
		if err != nil {
			return nil, c.translate("snapshot "+info.GetSnapshotKey(), err)
		}
		chain = digest.Digest(si.GetInfo().GetParent())
	}
	pm, err := resolvePlatform(ctx, contentStore{api.content}, target, chain)
	if err != nil {
		if errors.Is(err, ErrImageChanged) {
			return nil, fmt.Errorf("containerd %s/%s: image %s is now %s: %w", c.Namespace, id, info.GetImage(), target.Digest, err)
		}
		return nil, c.translate("image "+info.GetImage(), err)
	}
	o.addRepoDigest(target.Digest.String())
	o.addRepoDigest(pm.manifest.String())
	o.addImageID(pm.config.String())
	o.Platform = pm.platform
	return o, nil
}

// withNamespace sets the namespace of ctx's calls: containerd reads it
// from the first "containerd-namespace" header (what its client's
// namespaces.WithNamespace sets for gRPC), so one already on ctx is
// replaced, not appended to.
func withNamespace(ctx context.Context, ns string) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set("containerd-namespace", ns)
	return metadata.NewOutgoingContext(ctx, md)
}

// running returns nil when container id has a running task.
func (c *Containerd) running(ctx context.Context, api *containerdAPI, id string) error {
	got, err := api.tasks.Get(ctx, &tasksapi.GetRequest{ContainerID: id})
	if notFound(err) {
		return fmt.Errorf("containerd %s/%s: created, no task started: %w", c.Namespace, id, ErrNotRunning)
	}
	if err != nil {
		return c.translate("task "+id, err)
	}
	if st := got.GetProcess().GetStatus(); st != task.Status_RUNNING {
		return fmt.Errorf("containerd %s/%s: task %s: %w", c.Namespace, id, strings.ToLower(st.String()), ErrNotRunning)
	}
	return nil
}

// pick returns the container to observe when none was named: Default if
// it runs, else the only running one.
func (c *Containerd) pick(ctx context.Context, api *containerdAPI) (string, error) {
	list, err := api.containers.List(ctx, &containersapi.ListContainersRequest{})
	if err != nil {
		return "", c.translate("containers", err)
	}
	var ids []string
	for _, ctr := range list.GetContainers() {
		id := ctr.GetID()
		if c.running(ctx, api, id) != nil {
			continue
		}
		if c.Default != "" && id == c.Default {
			return id, nil
		}
		ids = append(ids, id)
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

// notFound reports whether err says the thing asked for does not exist:
// a gRPC NotFound from containerd, or errdefs.ErrNotFound.
func notFound(err error) bool {
	return err != nil && (errdefs.IsNotFound(err) || status.Code(err) == codes.NotFound)
}

// translate maps a containerd error about what: not found wraps
// ErrNoContainer, anything else is the daemon failing to answer.
func (c *Containerd) translate(what string, err error) error {
	if notFound(err) {
		return fmt.Errorf("containerd %s: %s: %v: %w", c.Namespace, what, err, ErrNoContainer)
	}
	return verdict.Unavailable(c.dependency(), fmt.Errorf("%s: %w", what, err))
}

// blobStore reads one whole blob; a blob it lacks is a notFound error.
type blobStore interface {
	readBlob(ctx context.Context, desc ocispec.Descriptor, limit int64) ([]byte, error)
}

// contentStore is containerd's content service as a blobStore.
type contentStore struct{ c contentapi.ContentClient }

// readBlob streams desc from containerd's content store, refusing more
// than limit bytes.
func (s contentStore) readBlob(ctx context.Context, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := s.c.Read(ctx, &contentapi.ReadContentRequest{Digest: desc.Digest.String()})
	if err != nil {
		return nil, err
	}
	var b []byte
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if resp.GetOffset() != int64(len(b)) {
			return nil, fmt.Errorf("blob %s: containerd sent offset %d after %d bytes", desc.Digest, resp.GetOffset(), len(b))
		}
		if int64(len(b))+int64(len(resp.GetData())) > limit {
			return nil, fmt.Errorf("blob %s: over %d bytes", desc.Digest, limit)
		}
		b = append(b, resp.GetData()...)
	}
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
func resolvePlatform(ctx context.Context, cs blobStore, target ocispec.Descriptor, chain digest.Digest) (*platformImage, error) {
	var candidates []ocispec.Descriptor
	switch target.MediaType {
	case ocispec.MediaTypeImageIndex, mediaTypeDockerManifestList:
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
	case ocispec.MediaTypeImageManifest, mediaTypeDockerManifest:
		candidates = []ocispec.Descriptor{target}
	default:
		return nil, fmt.Errorf("image target %s has media type %q, neither an index nor a manifest", target.Digest, target.MediaType)
	}
	for _, desc := range candidates {
		var m ocispec.Manifest
		if err := readJSON(ctx, cs, desc, &m); err != nil {
			if notFound(err) {
				continue
			}
			return nil, err
		}
		var cfg ocispec.Image
		if err := readJSON(ctx, cs, m.Config, &cfg); err != nil {
			if notFound(err) {
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
func readJSON(ctx context.Context, cs blobStore, desc ocispec.Descriptor, v any) error {
	if desc.Size > maxBlob {
		return fmt.Errorf("blob %s: %d bytes, over %d", desc.Digest, desc.Size, maxBlob)
	}
	b, err := cs.readBlob(ctx, desc, maxBlob)
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
