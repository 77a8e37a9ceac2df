package webhook

import (
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

// errNotJudged marks a request the webhook understands but does not judge.
var errNotJudged = errors.New("not judged")

// podObject is the part of an admitted object the webhook judges: its
// metadata and the pod spec it would run.
type podObject struct {
	// kind is what the object says it is (its apiVersion and kind).
	kind metav1.GroupVersionKind
	meta metav1.ObjectMeta
	spec *corev1.PodSpec
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
	switch gvk {
	case metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}:
		var o corev1.Pod
		return decodeAs(raw, &o, &o.TypeMeta, &o.ObjectMeta, &o.Spec)
	case metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}:
		var o appsv1.Deployment
		return decodeAs(raw, &o, &o.TypeMeta, &o.ObjectMeta, &o.Spec.Template.Spec)
	case metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:
		var o appsv1.ReplicaSet
		return decodeAs(raw, &o, &o.TypeMeta, &o.ObjectMeta, &o.Spec.Template.Spec)
	case metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}:
		var o appsv1.StatefulSet
		return decodeAs(raw, &o, &o.TypeMeta, &o.ObjectMeta, &o.Spec.Template.Spec)
	case metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}:
		var o appsv1.DaemonSet
		return decodeAs(raw, &o, &o.TypeMeta, &o.ObjectMeta, &o.Spec.Template.Spec)
	case metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}:
		var o batchv1.Job
		return decodeAs(raw, &o, &o.TypeMeta, &o.ObjectMeta, &o.Spec.Template.Spec)
	case metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}:
		var o batchv1.CronJob
		return decodeAs(raw, &o, &o.TypeMeta, &o.ObjectMeta, &o.Spec.JobTemplate.Spec.Template.Spec)
	}
	return nil, fmt.Errorf("%w: kind %s", errNotJudged, gvkString(gvk))
}

// decodeAs decodes raw into o, whose type, metadata and pod spec are tm,
// meta and spec. The type comes from the same strict decode (o's inline
// TypeMeta), not from a second pass over raw.
func decodeAs(raw []byte, o any, tm *metav1.TypeMeta, meta *metav1.ObjectMeta, spec *corev1.PodSpec) (*podObject, error) {
	if err := strictUnmarshal(raw, o); err != nil {
		return nil, err
	}
	kind := metav1.GroupVersionKind{Version: tm.APIVersion, Kind: tm.Kind}
	if g, v, ok := strings.Cut(tm.APIVersion, "/"); ok {
		kind.Group, kind.Version = g, v
	}
	return &podObject{kind: kind, meta: *meta, spec: spec}, nil
}

// strictUnmarshal decodes JSON case-sensitively, refusing duplicate fields
// and trailing data (two "image" keys are a classic bypass: one parser
// takes the first, another the last).
func strictUnmarshal(raw []byte, v any) error {
	strict, err := kjson.UnmarshalStrict(raw, v, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return errors.Join(strict...)
	}
	return nil
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
func images(spec *corev1.PodSpec) []ImageRef {
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
