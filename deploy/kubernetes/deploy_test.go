package kubernetes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kjson "sigs.k8s.io/json"

	"github.com/lockstep-dev/lockstep/internal/testkit/deploycheck"
)

// objects are the decoded deployment files.
type objects struct {
	namespaces      []corev1.Namespace
	serviceAccounts []corev1.ServiceAccount
	configMaps      []corev1.ConfigMap
	deployments     []appsv1.Deployment
	pdbs            []policyv1.PodDisruptionBudget
	services        []corev1.Service
	webhooks        []admissionregistrationv1.ValidatingWebhookConfiguration
}

// load decodes every document of every YAML file but the kustomization
// into its API type, refusing unknown fields (a typo in a field name is an
// error, not a silently ignored setting) and unknown kinds.
func load(t *testing.T) *objects {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	overlay, _ := filepath.Glob(filepath.Join("webhook", "*.yaml"))
	if err != nil || len(files) == 0 || len(overlay) == 0 {
		t.Fatalf("no YAML files: %v", err)
	}
	var o objects
	for _, f := range append(files, overlay...) {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for i := 0; ; i++ {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			if doc == nil {
				continue
			}
			js, err := json.Marshal(doc)
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var tm metav1.TypeMeta
			if err := json.Unmarshal(js, &tm); err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("%s document %d (%s %s)", f, i, tm.APIVersion, tm.Kind)
			switch tm.APIVersion + " " + tm.Kind {
			case "v1 Namespace":
				o.namespaces = append(o.namespaces, decode[corev1.Namespace](t, where, js))
			case "v1 ServiceAccount":
				o.serviceAccounts = append(o.serviceAccounts, decode[corev1.ServiceAccount](t, where, js))
			case "v1 ConfigMap":
				o.configMaps = append(o.configMaps, decode[corev1.ConfigMap](t, where, js))
			case "apps/v1 Deployment":
				o.deployments = append(o.deployments, decode[appsv1.Deployment](t, where, js))
			case "policy/v1 PodDisruptionBudget":
				o.pdbs = append(o.pdbs, decode[policyv1.PodDisruptionBudget](t, where, js))
			case "v1 Service":
				o.services = append(o.services, decode[corev1.Service](t, where, js))
			case "admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration":
				o.webhooks = append(o.webhooks, decode[admissionregistrationv1.ValidatingWebhookConfiguration](t, where, js))
			default:
				t.Fatalf("%s: a kind this test does not know; teach it", where)
			}
		}
	}
	return &o
}

func decode[T any](t *testing.T, where string, js []byte) T {
	t.Helper()
	var v T
	// Case-sensitive, no unknown or duplicate fields: the API server's
	// strict field validation (kubectl apply --validate=strict).
	strict, err := kjson.UnmarshalStrict(js, &v)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, e := range strict {
		t.Errorf("%s: %v", where, e)
	}
	return v
}

func one[T any](t *testing.T, what string, items []T) *T {
	t.Helper()
	if len(items) != 1 {
		t.Fatalf("%d %s, want exactly 1", len(items), what)
	}
	return &items[0]
}

const namespace = "lockstep"

// The label a namespace opts in with.
const optInLabel, optInValue = "lockstep.dev/webhook", "enabled"

func TestWebhookConfiguration(t *testing.T) {
	o := load(t)
	vwc := one(t, "ValidatingWebhookConfigurations", o.webhooks)
	w := one(t, "webhooks", vwc.Webhooks)
	if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy = %v, want Fail (fail closed)", deref(w.FailurePolicy))
	}
	if w.TimeoutSeconds == nil || *w.TimeoutSeconds != 5 {
		t.Errorf("timeoutSeconds = %v, want 5", deref(w.TimeoutSeconds))
	}
	if w.SideEffects == nil || *w.SideEffects != admissionregistrationv1.SideEffectClassNone {
		t.Errorf("sideEffects = %v, want None", deref(w.SideEffects))
	}
	if !slices.Equal(w.AdmissionReviewVersions, []string{"v1"}) {
		t.Errorf("admissionReviewVersions = %q, want [v1]", w.AdmissionReviewVersions)
	}
	if w.MatchPolicy == nil || *w.MatchPolicy != admissionregistrationv1.Equivalent {
		t.Errorf("matchPolicy = %v, want Equivalent (other versions of the kinds are converted, not missed)", deref(w.MatchPolicy))
	}
	if strings.Count(w.Name, ".") < 2 {
		t.Errorf("webhook name %q is not fully qualified", w.Name)
	}

	// The namespaceSelector governs only the namespaces that opt in with
	// the label, and never the system namespaces, lockstep's own (its pods
	// never wait on themselves) or cert-manager's (which issues its
	// certificate and fills its caBundle).
	sel := w.NamespaceSelector
	if sel == nil || len(sel.MatchLabels) != 1 || sel.MatchLabels[optInLabel] != optInValue {
		t.Errorf("namespaceSelector matchLabels %v, want only %s=%s (namespaces opt in)", sel.MatchLabels, optInLabel, optInValue)
	}
	if sel == nil || len(sel.MatchExpressions) != 1 {
		t.Fatalf("namespaceSelector = %+v, want one expression", sel)
	}
	e := sel.MatchExpressions[0]
	values := slices.Clone(e.Values)
	sort.Strings(values)
	excluded := []string{"cert-manager", "kube-node-lease", "kube-public", "kube-system", namespace}
	if e.Key != "kubernetes.io/metadata.name" || e.Operator != metav1.LabelSelectorOpNotIn || !slices.Equal(values, excluded) {
		t.Errorf("namespaceSelector expression %+v, want kubernetes.io/metadata.name NotIn %q", e, excluded)
	}
	sl, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []struct {
		labels labels.Set
		want   bool
	}{
		{labels.Set{"kubernetes.io/metadata.name": "shop"}, false},
		{labels.Set{"kubernetes.io/metadata.name": "shop", optInLabel: optInValue}, true},
		{labels.Set{"kubernetes.io/metadata.name": "kube-system", optInLabel: optInValue}, false},
		{labels.Set{"kubernetes.io/metadata.name": "cert-manager", optInLabel: optInValue}, false},
		{labels.Set{"kubernetes.io/metadata.name": namespace, optInLabel: optInValue}, false},
	} {
		if got := sl.Matches(ns.labels); got != ns.want {
			t.Errorf("a namespace labelled %v is governed: %v, want %v", ns.labels, got, ns.want)
		}
	}
	// Rules: CREATE and UPDATE of pods, pods/ephemeralcontainers and the
	// workload kinds, at the versions the webhook decodes; the client
	// config reaches the Service, at the handler's path, with no object
	// selector.
	deploycheck.WebhookRules(t, *w)
	deploycheck.ReachesService(t, *w, *one(t, "Services", o.services))
}

func TestDeployment(t *testing.T) {
	o := load(t)
	ns := one(t, "Namespaces", o.namespaces)
	if ns.Name != namespace {
		t.Errorf("namespace %q, want %q", ns.Name, namespace)
	}
	for _, m := range []metav1.ObjectMeta{
		o.deployments[0].ObjectMeta, one(t, "Services", o.services).ObjectMeta,
		one(t, "PodDisruptionBudgets", o.pdbs).ObjectMeta, one(t, "ServiceAccounts", o.serviceAccounts).ObjectMeta,
		o.configMaps[0].ObjectMeta, o.configMaps[1].ObjectMeta,
	} {
		if m.Namespace != namespace {
			t.Errorf("%s is in namespace %q, want %q", m.Name, m.Namespace, namespace)
		}
	}

	d := one(t, "Deployments", o.deployments)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", deref(d.Spec.Replicas))
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("rollingUpdate %+v, want maxUnavailable 0 (a rollout never drops a replica)", ru)
	}
	podLabels := d.Spec.Template.Labels
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(podLabels)) {
		t.Errorf("the Deployment's selector %v does not match its pods %v", d.Spec.Selector, podLabels)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != o.serviceAccounts[0].Name {
		t.Errorf("serviceAccountName %q, want %q", pod.ServiceAccountName, o.serviceAccounts[0].Name)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil ||
		psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v, want runAsNonRoot and the RuntimeDefault seccomp profile", psc)
	}
	aa := pod.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)+len(aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Fatalf("no pod anti-affinity: both replicas may land on one node")
	}
	for _, term := range aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		s, err := metav1.LabelSelectorAsSelector(term.PodAffinityTerm.LabelSelector)
		if err != nil || !s.Matches(labels.Set(podLabels)) || term.PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
			t.Errorf("anti-affinity term %+v does not spread the webhook's own pods over hosts", term.PodAffinityTerm)
		}
	}

	c := one(t, "containers", pod.Containers)
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("the container has no securityContext")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem is not true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation is not false")
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("the container is privileged")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v, want a CPU request and a memory limit", c.Resources)
	}

	// Probes and the Service reach the container's HTTPS port.
	for name, p := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Scheme != corev1.URISchemeHTTPS || p.HTTPGet.Port.String() != "https" {
			t.Errorf("%s %+v, want an HTTPS GET on the https port", name, p)
		}
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes %s and %s, want /readyz and /healthz", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "https" && p.ContainerPort == 8443 }) {
		t.Errorf("container ports %v, want https 8443", c.Ports)
	}
	svc := o.services[0]
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(podLabels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("the Service's selector %v does not match the pods %v", svc.Spec.Selector, podLabels)
	}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.String() != "https" {
			t.Errorf("Service port %d targets %s, want the container's https port", p.Port, p.TargetPort.String())
		}
	}

	// The PodDisruptionBudget keeps a replica through voluntary disruptions.
	pdb := o.pdbs[0]
	s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || !s.Matches(labels.Set(podLabels)) {
		t.Errorf("the PodDisruptionBudget's selector %v does not match the pods", pdb.Spec.Selector)
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || pdb.Spec.MinAvailable.IntValue() >= int(*d.Spec.Replicas) {
		t.Errorf("minAvailable %v, want at least 1 and below the replicas (or drains block)", pdb.Spec.MinAvailable)
	}

	// The arguments are flags lockstep webhook has, and the files they
	// name are mounted.
	checkArgs(t, c, pod.Volumes, o.configMaps)
}

// checkArgs checks the container's command line against lockstep
// webhook's own flags, and that the TLS files are on a mounted Secret.
func checkArgs(t *testing.T, c *corev1.Container, volumes []corev1.Volume, cms []corev1.ConfigMap) {
	t.Helper()
	values := deploycheck.WebhookFlags(t, c, cms)
	mounted := func(path string) *corev1.Volume {
		for _, m := range c.VolumeMounts {
			if strings.HasPrefix(path, m.MountPath+"/") {
				for i := range volumes {
					if volumes[i].Name == m.Name {
						return &volumes[i]
					}
				}
			}
		}
		return nil
	}
	for _, f := range []string{"tls-cert", "tls-key"} {
		v := mounted(values[f])
		if v == nil || v.Secret == nil {
			t.Errorf("--%s=%s is not on a mounted Secret", f, values[f])
		}
	}
	if k := values["LOCKSTEP_KEY"]; k != "" && mounted(k) == nil {
		t.Errorf("LOCKSTEP_KEY=%s is not on a mounted volume", k)
	}
	if values["insecure-allow-unsigned"] != "" || slices.Contains(c.Args, "--insecure-allow-unsigned") {
		t.Error("the deployment accepts unsigned manifests")
	}
	if values["mode"] != "enforce" || values["unmanaged"] != "deny" {
		t.Errorf("--mode=%s --unmanaged=%s, want the safe defaults spelled out", values["mode"], values["unmanaged"])
	}
}
