package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

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

// ErrNotFound is what a PodLister wraps when the API answers 404.
var ErrNotFound = errors.New("not found")

// pods reads every pod of a namespace, page by page, and returns one
// target per container with the digest its runtime reports.
func (o DiscoverOptions) pods(ctx context.Context, spec, arg string) ([]Target, error) {
	namespace, selector, _ := strings.Cut(arg, "/")
	if namespace == "" {
		return nil, &SpecError{Spec: spec, Reason: "want k8s:NAMESPACE[/SELECTOR]"}
	}
	if o.Kubernetes == nil {
		return nil, &SpecError{Spec: spec, Reason: "no Kubernetes client"}
	}
	var out []Target
	token := ""
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
			out = append(out, podTargets(spec, &p)...)
		}
		token = list.Continue
		if token == "" {
			return out, nil
		}
	}
}

func podTargets(spec string, p *corev1.Pod) []Target {
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
			Name: p.Namespace + "/" + p.Name + "/" + cs.Name, Image: ref, Running: imageIDDigest(cs.ImageID),
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
