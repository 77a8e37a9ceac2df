package running

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultCRIEndpoint is the CRI socket looked at by default: containerd's
// (its CRI plugin), as crictl's first default.
const DefaultCRIEndpoint = "/run/containerd/containerd.sock"

// podNameLabel is the label kubelet gives every container: its pod's name.
const podNameLabel = "io.kubernetes.pod.name"

// CRI reads a container's image through the Container Runtime Interface
// (the API kubelet speaks: containerd's CRI plugin, CRI-O):
// ContainerStatus for the image reference the container runs, then
// ImageStatus of that reference for the image ID (the config digest), the
// repo digests and, from the verbose answer, the image's platform.
type CRI struct {
	// Endpoint is the CRI socket path.
	Endpoint string
	// Pod, when set, narrows Container to the pod of that name.
	Pod string
	// Container is a container ID, an ID prefix, or a container name
	// (kubelet's metadata name). Empty means Default if such a container
	// runs, else the only running container.
	Container string
	Default   string
}

var _ Source = (*CRI)(nil)

// NewCRI returns the CRI source for spec "[POD/][CONTAINER]" on endpoint (a
// socket path or unix:///path; empty means DefaultCRIEndpoint).
func NewCRI(endpoint, spec string, opt Options) (*CRI, error) {
	path, err := socketPath("CRI", endpoint, DefaultCRIEndpoint)
	if err != nil {
		return nil, err
	}
	pod, name, err := splitScope("cri", spec, "[POD/]CONTAINER")
	if err != nil {
		return nil, err
	}
	return &CRI{Endpoint: path, Pod: pod, Container: name, Default: opt.DefaultContainer}, nil
}

func (c *CRI) dependency() string { return "CRI " + c.Endpoint }

// Observe asks the runtime. An unreachable runtime, or one answering with
// an error, is an *verdict.UnavailableError; a container that does not
// exist wraps ErrNoContainer (several that match a name ErrAmbiguous), one
// that is not running ErrNotRunning.
func (c *CRI) Observe(ctx context.Context) (*Observation, error) {
	if err := reach(ctx, c.dependency(), c.Endpoint); err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("unix://"+c.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxBody)))
	if err != nil {
		return nil, verdict.Unavailable(c.dependency(), err)
	}
	defer conn.Close()
	rt, is := cri.NewRuntimeServiceClient(conn), cri.NewImageServiceClient(conn)
	id, err := c.find(ctx, rt)
	if err != nil {
		return nil, err
	}
	st, err := rt.ContainerStatus(ctx, &cri.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return nil, c.translate("ContainerStatus "+id, err)
	}
	s := st.GetStatus()
	if s == nil {
		return nil, verdict.Unavailable(c.dependency(), fmt.Errorf("ContainerStatus %s: no status in the answer", id))
	}
	name := s.GetMetadata().GetName()
	if name == "" {
		name = s.GetId()
	}
	if s.GetState() != cri.ContainerState_CONTAINER_RUNNING {
		return nil, fmt.Errorf("%s: container %s is not running (state %s): %w", c.dependency(), name, s.GetState(), ErrNotRunning)
	}
	source := "cri:" + name
	if pod := s.GetLabels()[podNameLabel]; pod != "" {
		source = "cri:" + pod + "/" + name
	}
	o := &Observation{Source: source, Container: s.GetId(), Reference: s.GetImage().GetImage()}
	ref := s.GetImageRef()
	if ref == "" {
		return o, nil
	}
	if _, ok := digestOf(ref); !ok {
		// A tag (some runtimes report one): what it names now is not
		// what was started, so it is not resolved.
		o.Unpinned = append(o.Unpinned, ref)
		return o, nil
	}
	// The image is asked for by the reference the container runs (a
	// digest, never its tag, which may have moved since).
	im, err := is.ImageStatus(ctx, &cri.ImageStatusRequest{Image: &cri.ImageSpec{Image: ref}, Verbose: true})
	if err != nil {
		return nil, c.translate("ImageStatus "+ref, err)
	}
	if im.GetImage() == nil {
		// The image was removed since: only the reference is known.
		if isBareDigest(ref) {
			o.addImageID(ref)
		} else {
			o.addRepoDigest(ref)
		}
		return o, nil
	}
	o.addImageID(im.GetImage().GetId())
	if !isBareDigest(ref) {
		o.addRepoDigest(ref)
	}
	for _, rd := range im.GetImage().GetRepoDigests() {
		o.addRepoDigest(rd)
	}
	o.Platform = criPlatform(im.GetInfo())
	return o, nil
}

// isBareDigest reports whether ref is "algo:hex" with no repository.
func isBareDigest(ref string) bool {
	return !strings.ContainsAny(ref, "@/")
}

// criPlatform returns the os/arch[/variant] of a verbose ImageStatus
// answer: containerd's "info" holds the image config as "imageSpec".
func criPlatform(info map[string]string) string {
	var v struct {
		ImageSpec struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
			Variant      string `json:"variant"`
		} `json:"imageSpec"`
	}
	if json.Unmarshal([]byte(info["info"]), &v) != nil || v.ImageSpec.OS == "" || v.ImageSpec.Architecture == "" {
		return ""
	}
	p := v.ImageSpec.OS + "/" + v.ImageSpec.Architecture
	if v.ImageSpec.Variant != "" {
		p += "/" + v.ImageSpec.Variant
	}
	return p
}

// find returns the ID of the container the spec names: by ID or ID
// prefix, else by name among the running containers (in Pod, if set),
// else, with no name, Default or the only running container.
func (c *CRI) find(ctx context.Context, rt cri.RuntimeServiceClient) (string, error) {
	list, err := rt.ListContainers(ctx, &cri.ListContainersRequest{})
	if err != nil {
		return "", c.translate("ListContainers", err)
	}
	want := c.Container
	if want == "" {
		want = c.Default
	}
	// Kubelet keeps a restarted container's exited attempts under the
	// same name: a running one of the name is the one, an exited one
	// only says "not running yet".
	var byName, stoppedByName, runningIDs, names []string
	for _, ct := range list.GetContainers() {
		if c.Pod != "" && ct.GetLabels()[podNameLabel] != c.Pod {
			continue
		}
		if c.Container != "" && c.Pod == "" && (ct.GetId() == c.Container || len(c.Container) >= 12 && strings.HasPrefix(ct.GetId(), c.Container)) {
			return ct.GetId(), nil
		}
		named := want != "" && ct.GetMetadata().GetName() == want
		if ct.GetState() != cri.ContainerState_CONTAINER_RUNNING {
			if named {
				stoppedByName = append(stoppedByName, ct.GetId())
			}
			continue
		}
		if named {
			byName = append(byName, ct.GetId())
		}
		runningIDs = append(runningIDs, ct.GetId())
		names = append(names, ct.GetMetadata().GetName())
	}
	where := ""
	if c.Pod != "" {
		where = " in pod " + c.Pod
	}
	switch {
	case len(byName) == 1:
		return byName[0], nil
	case len(byName) > 1:
		return "", fmt.Errorf("%s: %d running containers named %s%s; name the pod (cri:POD/NAME) or give the ID: %w", c.dependency(), len(byName), want, where, ErrAmbiguous)
	case len(stoppedByName) > 0:
		return stoppedByName[0], nil
	case c.Container != "":
		return "", fmt.Errorf("%s: no container %s%s: %w", c.dependency(), c.Container, where, ErrNoContainer)
	case len(runningIDs) == 1:
		return runningIDs[0], nil
	case len(runningIDs) == 0:
		return "", fmt.Errorf("%s: no running container%s: %w", c.dependency(), where, ErrNoContainer)
	}
	return "", fmt.Errorf("%s: %d containers run%s (%s); name one as cri:[POD/]NAME: %w", c.dependency(), len(runningIDs), where, strings.Join(names, ", "), ErrAmbiguous)
}

// translate maps a gRPC error about what: NotFound wraps ErrNoContainer,
// anything else is the runtime failing to answer.
func (c *CRI) translate(what string, err error) error {
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("%s: %s: %s: %w", c.dependency(), what, status.Convert(err).Message(), ErrNoContainer)
	}
	return verdict.Unavailable(c.dependency(), fmt.Errorf("%s: %w", what, err))
}
