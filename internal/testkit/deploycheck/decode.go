package deploycheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	kjson "sigs.k8s.io/json"
)

// Object is one Kubernetes object as JSON decodes it (numbers are float64).
type Object = map[string]any

// Documents decodes every YAML document of raw into an Object, skipping
// empty documents; a document that is not valid YAML or not an object fails
// t, named by where and its index.
func Documents(t testing.TB, where string, raw []byte) []Object {
	t.Helper()
	var out []Object
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for i := 0; ; i++ {
		var doc any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s document %d: %v", where, i, err)
		}
		if doc == nil {
			continue
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("%s document %d: %v", where, i, err)
		}
		var o Object
		if err := json.Unmarshal(js, &o); err != nil {
			t.Fatalf("%s document %d is not an object: %v", where, i, err)
		}
		out = append(out, o)
	}
}

// Key names an object: apiVersion, kind, namespace/name.
func Key(o Object) string {
	md, _ := o["metadata"].(map[string]any)
	return fmt.Sprintf("%v %v %v/%v", o["apiVersion"], o["kind"], md["namespace"], md["name"])
}

// Objects are the objects of a deployment of the webhook, each decoded
// strictly into its API type, in the order they came.
type Objects struct {
	Namespaces      []corev1.Namespace
	ServiceAccounts []corev1.ServiceAccount
	ConfigMaps      []corev1.ConfigMap
	Deployments     []appsv1.Deployment
	PDBs            []policyv1.PodDisruptionBudget
	Services        []corev1.Service
	Webhooks        []admissionregistrationv1.ValidatingWebhookConfiguration
	// Other holds the objects of the kinds Decode was told to keep as
	// they are (those k8s.io/api lacks, such as cert-manager's), by
	// "apiVersion kind".
	Other map[string][]Object
}

// Decode decodes every YAML document of raw (as Documents) into o by its
// apiVersion and kind, refusing unknown and duplicate fields and fields in
// the wrong case (the API server's strict field validation, kubectl apply
// --validate=strict: a typo in a field name is an error, not a silently
// ignored setting). A kind that is neither one of Objects' nor one of keep
// ("apiVersion kind") fails t: a test must be taught every kind it reads.
func (o *Objects) Decode(t testing.TB, where string, raw []byte, keep ...string) {
	t.Helper()
	for i, doc := range Documents(t, where, raw) {
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("%s document %d: %v", where, i, err)
		}
		at := fmt.Sprintf("%s document %d (%s)", where, i, Key(doc))
		kind := fmt.Sprint(doc["apiVersion"], " ", doc["kind"])
		switch kind {
		case "v1 Namespace":
			o.Namespaces = append(o.Namespaces, strict[corev1.Namespace](t, at, js))
		case "v1 ServiceAccount":
			o.ServiceAccounts = append(o.ServiceAccounts, strict[corev1.ServiceAccount](t, at, js))
		case "v1 ConfigMap":
			o.ConfigMaps = append(o.ConfigMaps, strict[corev1.ConfigMap](t, at, js))
		case "apps/v1 Deployment":
			o.Deployments = append(o.Deployments, strict[appsv1.Deployment](t, at, js))
		case "policy/v1 PodDisruptionBudget":
			o.PDBs = append(o.PDBs, strict[policyv1.PodDisruptionBudget](t, at, js))
		case "v1 Service":
			o.Services = append(o.Services, strict[corev1.Service](t, at, js))
		case "admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration":
			o.Webhooks = append(o.Webhooks, strict[admissionregistrationv1.ValidatingWebhookConfiguration](t, at, js))
		default:
			if !slices.Contains(keep, kind) {
				t.Fatalf("%s: a kind this test does not know; teach it", at)
			}
			if o.Other == nil {
				o.Other = map[string][]Object{}
			}
			o.Other[kind] = append(o.Other[kind], doc)
		}
	}
}

// strict decodes js into a T, failing t on any error and reporting every
// strict-validation error (unknown, duplicate or wrong-case field).
func strict[T any](t testing.TB, where string, js []byte) T {
	t.Helper()
	var v T
	errs, err := kjson.UnmarshalStrict(js, &v)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, e := range errs {
		t.Errorf("%s: %v", where, e)
	}
	return v
}
