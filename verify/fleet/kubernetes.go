package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultPodPage is how many pods Discover asks for at once (the list
// call's limit).
const DefaultPodPage = 500

// PodLister is the Kubernetes call Discover makes for k8s:NAMESPACE: one
// page of the namespace's pods (GET /api/v1/namespaces/NS/pods with
// labelSelector, limit and continue). An answer 404 is an error wrapping
// ErrNotFound (the API server answers an empty list for a namespace that
// does not exist, so Discover reports that as no pods).
type PodLister interface {
	ListPods(ctx context.Context, namespace, selector string, limit int64, continueToken string) (*corev1.PodList, error)
}

// NodeGetter is the Kubernetes call Discover makes, when its PodLister
// has it, for the platform of the node a pod runs on: GET
// /api/v1/nodes/NAME (status.nodeInfo's operatingSystem and
// architecture). An answer 404 wraps ErrNotFound, 403 ErrForbidden: the
// platform is then not known (the documented Role lists pods only).
type NodeGetter interface {
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
}

// ErrNotFound is what a PodLister wraps when the API answers 404.
var ErrNotFound = errors.New("not found")

// ErrForbidden is what a NodeGetter wraps when the API answers 403.
var ErrForbidden = errors.New("forbidden")

// pods reads every pod of a namespace, page by page, and returns one
// target per container with the digest its runtime reports.
func (o DiscoverOptions) pods(ctx context.Context, spec, arg string) ([]Target, error) {
	namespace, selector, _ := strings.Cut(arg, "/")
	if namespace == "" {
		return nil, &SpecError{Spec: spec, Reason: "want k8s:NAMESPACE[/SELECTOR]"}
	}
	// Checked as the API server checks them, before any request: a
	// malformed one is the user's to fix (exit 2), not an API failure.
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return nil, &SpecError{Spec: spec, Reason: fmt.Sprintf("namespace %q: %s", namespace, strings.Join(errs, "; "))}
	}
	if _, err := labels.Parse(selector); err != nil {
		return nil, &SpecError{Spec: spec, Reason: fmt.Sprintf("label selector %q: %v", selector, err), Err: err}
	}
	if o.Kubernetes == nil {
		return nil, &SpecError{Spec: spec, Reason: "no Kubernetes client"}
	}
	var out []Target
	token := ""
	platforms := map[string]string{}
	for {
		list, err := o.Kubernetes.ListPods(ctx, namespace, selector, DefaultPodPage, token)
		if errors.Is(err, ErrNotFound) {
			return nil, &SpecError{Spec: spec, Reason: "the API server has no pods resource there", Err: err}
		}
		if err != nil {
			return nil, verdict.Unavailable("kubernetes", fmt.Errorf("listing the pods of %s: %w", arg, err))
		}
		for _, p := range list.Items {
			if p.Status.Phase != corev1.PodRunning {
				continue
			}
			platform, err := o.nodePlatform(ctx, platforms, p.Spec.NodeName)
			if err != nil {
				return nil, err
			}
			out = append(out, podTargets(spec, &p, platform)...)
		}
		token = list.Continue
		if token == "" {
			return out, nil
		}
	}
}

// nodePlatform is the os/arch of a node as the API reports it, asked once
// a node (seen caches it); "" when the client cannot ask, the node is not
// known or may not be read.
func (o DiscoverOptions) nodePlatform(ctx context.Context, seen map[string]string, node string) (string, error) {
	ng, ok := o.Kubernetes.(NodeGetter)
	if !ok || node == "" {
		return "", nil
	}
	if p, ok := seen[node]; ok {
		return p, nil
	}
	n, err := ng.GetNode(ctx, node)
	switch {
	case errors.Is(err, ErrNotFound) || errors.Is(err, ErrForbidden):
		seen[node] = ""
		return "", nil
	case err != nil:
		return "", verdict.Unavailable("kubernetes", fmt.Errorf("getting node %s: %w", node, err))
	}
	p := ""
	if info := n.Status.NodeInfo; info.OperatingSystem != "" && info.Architecture != "" {
		p = info.OperatingSystem + "/" + info.Architecture
	}
	seen[node] = p
	return p, nil
}

func podTargets(spec string, p *corev1.Pod, platform string) []Target {
	image := map[string]string{}
	for _, c := range p.Spec.Containers {
		image[c.Name] = c.Image
	}
	var out []Target
	for _, cs := range p.Status.ContainerStatuses {
		ref := image[cs.Name]
		if ref == "" {
			ref = cs.Image
		}
		out = append(out, Target{URL: "k8s:" + p.Namespace + "/" + p.Name, Spec: spec, Observed: &Observed{
			Name: p.Namespace + "/" + p.Name + "/" + cs.Name, Container: cs.Name, Image: ref, Running: imageIDDigest(cs.ImageID),
			Platform: platform,
		}})
	}
	return out
}

// imageIDDigest is the digest in a container status's imageID, whichever
// form the runtime gives (kubernetes#115199): "docker-pullable://repo@sha256:…",
// "repo@sha256:…" (a manifest or index digest) or a bare "sha256:…" (often
// the config digest). Zero when there is none (a container not started).
func imageIDDigest(id string) manifest.Digest {
	if _, rest, ok := strings.Cut(id, "://"); ok {
		id = rest
	}
	if _, d, ok := strings.Cut(id, "@"); ok {
		id = d
	}
	d, err := manifest.ParseDigest(id)
	if err != nil {
		return manifest.Digest{}
	}
	return d
}
