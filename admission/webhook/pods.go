package webhook

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// errNotJudged marks a request the webhook understands but does not judge.
var errNotJudged = errors.New("not judged")

// podObject is the part of an admitted object the webhook judges: its
// metadata and the pod spec it would run.
type podObject struct {
	// kind is what the object says it is (its apiVersion and kind).
	kind metav1.GroupVersionKind
	meta objectMeta
	spec *podSpec
}

// The webhook decodes only the fields it judges, not the whole Pod or
// workload (k8s.io/api's types): those are most of a review's decoding
// cost, and a field not modelled here cannot change an image. Every field
// that names an image a pod pulls is here: containers, init containers,
// ephemeral containers and image volumes (images lists them). The JSON
// names are k8s.io/api's, matched case-sensitively as the API server
// matches them; TestMinimalTypesMatchKubernetes checks them against it.

// objectMeta is the part of metav1.ObjectMeta a message names.
type objectMeta struct {
	GenerateName string `json:"generateName,omitempty"`
}

// podSpec is the part of corev1.PodSpec that names images.
type podSpec struct {
	InitContainers      []container `json:"initContainers,omitempty"`
	Containers          []container `json:"containers"`
	EphemeralContainers []container `json:"ephemeralContainers,omitempty"`
	Volumes             []podVolume `json:"volumes,omitempty"`
}

// container is the part of corev1.Container (and of an ephemeral
// container's EphemeralContainerCommon) that names an image.
type container struct {
	Name  string `json:"name"`
	Image string `json:"image,omitempty"`
}

// podVolume is the part of corev1.Volume that names an image.
type podVolume struct {
	Name  string       `json:"name"`
	Image *imageVolume `json:"image,omitempty"`
}

// imageVolume is the part of corev1.ImageVolumeSource that names an image.
type imageVolume struct {
	Reference string `json:"reference,omitempty"`
}

// podTemplate is corev1.PodTemplateSpec's spec.
type podTemplate struct {
	Spec podSpec `json:"spec"`
}

// The kinds judged, each with the path to its pod spec.
type (
	podKind struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        objectMeta `json:"metadata"`
		Spec            podSpec    `json:"spec"`
	}
	// workloadKind is a Deployment, ReplicaSet, StatefulSet, DaemonSet or
	// Job: spec.template is the pod template.
	workloadKind struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        objectMeta `json:"metadata"`
		Spec            struct {
			Template podTemplate `json:"template"`
		} `json:"spec"`
	}
	cronJobKind struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        objectMeta `json:"metadata"`
		Spec            struct {
			JobTemplate struct {
				Spec struct {
					Template podTemplate `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
)

// judgedKinds are the kinds the webhook judges.
var judgedKinds = map[metav1.GroupVersionKind]bool{
	{Version: "v1", Kind: "Pod"}:                        true,
	{Group: "apps", Version: "v1", Kind: "Deployment"}:  true,
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:  true,
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}: true,
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:   true,
	{Group: "batch", Version: "v1", Kind: "Job"}:        true,
	{Group: "batch", Version: "v1", Kind: "CronJob"}:    true,
}

// decodePodObject decodes raw as the kind the API server says it is and
// returns its pod spec: a Pod's own, or a workload's pod template.
// Decoding is case-sensitive and refuses duplicate fields; unknown fields
// are tolerated (a newer API server adds some), as the API server itself
// has already validated the object. An unsupported kind wraps errNotJudged.
func decodePodObject(gvk metav1.GroupVersionKind, raw []byte) (*podObject, error) {
	if len(raw) == 0 {
		return nil, errors.New("no object")
	}
	if !judgedKinds[gvk] {
		return nil, fmt.Errorf("%w: kind %s", errNotJudged, gvkString(gvk))
	}
	switch {
	case gvk.Kind == "Pod":
		var o podKind
		return decodeAs(raw, &o, &o.TypeMeta, &o.Metadata, &o.Spec)
	case gvk.Kind == "CronJob":
		var o cronJobKind
		return decodeAs(raw, &o, &o.TypeMeta, &o.Metadata, &o.Spec.JobTemplate.Spec.Template.Spec)
	default:
		var o workloadKind
		return decodeAs(raw, &o, &o.TypeMeta, &o.Metadata, &o.Spec.Template.Spec)
	}
}

// decodeAs decodes raw into o, whose type, metadata and pod spec are tm,
// meta and spec. The type comes from the same strict decode (o's inline
// TypeMeta), not from a second pass over raw.
func decodeAs(raw []byte, o any, tm *metav1.TypeMeta, meta *objectMeta, spec *podSpec) (*podObject, error) {
	if err := strictUnmarshal(raw, o); err != nil {
		return nil, err
	}
	kind := metav1.GroupVersionKind{Version: tm.APIVersion, Kind: tm.Kind}
	if g, v, ok := strings.Cut(tm.APIVersion, "/"); ok {
		kind.Group, kind.Version = g, v
	}
	return &podObject{kind: kind, meta: *meta, spec: spec}, nil
}

func gvkString(gvk metav1.GroupVersionKind) string {
	gv := gvk.Version
	if gvk.Group != "" {
		gv = gvk.Group + "/" + gvk.Version
	}
	return gv + " " + gvk.Kind
}

// images lists every image a pod spec would pull: containers, init
// containers, ephemeral containers and image volumes.
func images(spec *podSpec) []ImageRef {
	var refs []ImageRef
	for _, c := range spec.InitContainers {
		refs = append(refs, ImageRef{Field: "initContainers", Name: c.Name, Image: c.Image})
	}
	for _, c := range spec.Containers {
		refs = append(refs, ImageRef{Field: "containers", Name: c.Name, Image: c.Image})
	}
	for _, c := range spec.EphemeralContainers {
		refs = append(refs, ImageRef{Field: "ephemeralContainers", Name: c.Name, Image: c.Image})
	}
	for _, v := range spec.Volumes {
		if v.Image != nil {
			refs = append(refs, ImageRef{Field: "volumes", Name: v.Name, Image: v.Image.Reference})
		}
	}
	return refs
}

// changed returns the references of now that were not in before: on an
// UPDATE, only an image that changes can change what runs, and an unchanged
// one was admitted when it was created. Judging only changes keeps a
// controller able to update (finalizers, labels, scale) a workload whose
// release is no longer current; its new pods are judged when created.
func changed(now, before []ImageRef) []ImageRef {
	old := make(map[ImageRef]bool, len(before))
	for _, r := range before {
		old[r] = true
	}
	var out []ImageRef
	for _, r := range now {
		if !old[r] {
			out = append(out, r)
		}
	}
	return out
}
