package helm

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/kubetest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// standInCRDs creates cert-manager's Certificate and Issuer kinds on the
// API server (cert-manager itself is not here): their schema accepts any
// spec, which is enough for Helm to create the chart's objects of them.
func standInCRDs(t *testing.T, c *kubetest.Cluster) {
	t.Helper()
	for _, kind := range []string{"Certificate", "Issuer"} {
		plural := strings.ToLower(kind) + "s"
		crd := map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": plural + ".cert-manager.io"},
			"spec": map[string]any{
				"group": "cert-manager.io", "scope": "Namespaced",
				"names": map[string]any{"kind": kind, "plural": plural, "singular": strings.ToLower(kind), "listKind": kind + "List"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
			},
		}
		c.Must(t, http.StatusCreated, kubetest.Request{Method: http.MethodPost, Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: crd})
	}
	// Established by the API server's own apiextensions controller.
	deadline := time.Now().Add(30 * time.Second)
	for _, plural := range []string{"certificates", "issuers"} {
		for {
			r := c.Do(t, kubetest.Request{Method: http.MethodGet, Path: "/apis/cert-manager.io/v1/namespaces/default/" + plural})
			if r.Code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the stand-in CRD %s is not served: HTTP %d %s", plural, r.Code, r.Body)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// pod is a pod pinned by digest that Pod Security's restricted profile
// admits, so that only the webhook could refuse it.
func pod(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"securityContext": map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			"containers": []any{map[string]any{"name": "web", "image": "registry.example/shop/web@sha256:" + strings.Repeat("a", 64),
				"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []string{"ALL"}}}}}}}
}

// TestHelmInstall installs the chart with helm install into a real
// kube-apiserver (internal/testkit/kubetest: no kubelet, scheduler or
// controller-manager, so the webhook's pods never run) and checks what the
// API server stores, and how it then admits pods: the objects exist as the
// values asked; values the schema refuses install nothing; and, with the
// stored configuration's clientConfig pointed at a closed loopback port
// (the webhook down; the API server would otherwise dial the Service's
// cluster IP, which is not loopback), failurePolicy Fail refuses a pod in a
// namespace that opted in, naming the webhook, and admits one in a
// namespace that did not, in the release's own namespace (labelled too)
// and in kube-system; an upgrade to Ignore admits it; an upgrade to
// namespaceSelection all governs every other namespace; helm uninstall
// removes the webhook configuration and the pod is admitted again.
func TestHelmInstall(t *testing.T) {
	helmBin(t)
	c := kubetest.Start(t)
	kubeconfig := c.Kubeconfig(t, c.AdminToken)
	standInCRDs(t, c)
	helm := func(args ...string) {
		t.Helper()
		if out, err := runHelm(t, append(args, "--kubeconfig", kubeconfig)...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	c.Namespace(t, "shop", map[string]string{"lockstep.dev/webhook": "enabled"})
	c.Namespace(t, "plain", nil)
	// kube-system has no default ServiceAccount without a controller-manager.
	c.Must(t, http.StatusCreated, kubetest.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/kube-system/serviceaccounts",
		Body: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"}}})

	// The schema refuses before anything reaches the API server.
	if out, err := runHelm(t, "install", "bad", chartDir, "--namespace", "lockstep", "--create-namespace", "-f", kustomizeValues,
		"--set", "webhook.failurepolicy=Ignore", "--kubeconfig", kubeconfig); err == nil {
		t.Fatalf("helm install with a misspelt value succeeded:\n%s", out)
	}
	if r := c.Do(t, kubetest.Request{Method: http.MethodGet, Path: "/api/v1/namespaces/lockstep"}); r.Code != http.StatusNotFound {
		t.Errorf("after a refused install, namespace lockstep: HTTP %d, want 404 (nothing created)", r.Code)
	}

	// Install as docs/kubernetes.md does; kustomize-values.yaml asks for the
	// chart's Namespace too (namespace.create): Helm makes the namespace for
	// its release record, the chart's Namespace adds Pod Security to it.
	helm("install", "lockstep", chartDir, "--namespace", "lockstep", "--create-namespace", "-f", kustomizeValues, "--set", "webhook.timeoutSeconds=3")
	var d appsv1.Deployment
	c.Must(t, http.StatusOK, kubetest.Request{Method: http.MethodGet, Path: "/apis/apps/v1/namespaces/lockstep/deployments/lockstep-webhook"}).Decode(t, &d)
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "ghcr.io/lockstep-dev/lockstep:v0.1.0" ||
		d.Labels["app.kubernetes.io/managed-by"] != "Helm" {
		t.Errorf("the Deployment stored: replicas %d, image %s, labels %v", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, d.Labels)
	}
	var cm corev1.ConfigMap
	c.Must(t, http.StatusOK, kubetest.Request{Method: http.MethodGet, Path: "/api/v1/namespaces/lockstep/configmaps/lockstep-webhook"}).Decode(t, &cm)
	if cm.Data["LOCKSTEP_STORE"] != "s3://my-release-bucket/lockstep" || cm.Data["LOCKSTEP_RELEASE"] != "store-web" {
		t.Errorf("the ConfigMap stored: %v", cm.Data)
	}
	var ns corev1.Namespace
	c.Must(t, http.StatusOK, kubetest.Request{Method: http.MethodGet, Path: "/api/v1/namespaces/lockstep"}).Decode(t, &ns)
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace lockstep labels %v, want Pod Security restricted", ns.Labels)
	}
	for _, path := range []string{
		"/api/v1/namespaces/lockstep/services/lockstep-webhook", "/api/v1/namespaces/lockstep/serviceaccounts/lockstep-webhook",
		"/api/v1/namespaces/lockstep/configmaps/lockstep-webhook-trust", "/apis/policy/v1/namespaces/lockstep/poddisruptionbudgets/lockstep-webhook",
		"/apis/cert-manager.io/v1/namespaces/lockstep/certificates/lockstep-webhook", "/apis/cert-manager.io/v1/namespaces/lockstep/certificates/lockstep-ca",
		"/apis/cert-manager.io/v1/namespaces/lockstep/issuers/lockstep-ca", "/apis/cert-manager.io/v1/namespaces/lockstep/issuers/lockstep-selfsigned",
	} {
		if r := c.Do(t, kubetest.Request{Method: http.MethodGet, Path: path}); r.Code != http.StatusOK {
			t.Errorf("GET %s: HTTP %d, want the object the chart installs", path, r.Code)
		}
	}
	const vwcPath = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/lockstep"
	stored := func() admissionregistrationv1.ValidatingWebhook {
		t.Helper()
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		c.Must(t, http.StatusOK, kubetest.Request{Method: http.MethodGet, Path: vwcPath}).Decode(t, &v)
		if v.Annotations["cert-manager.io/inject-ca-from"] != "lockstep/lockstep-webhook" || len(v.Webhooks) != 1 {
			t.Fatalf("the webhook configuration stored: %+v", v)
		}
		return v.Webhooks[0]
	}
	w := stored()
	if *w.FailurePolicy != admissionregistrationv1.Fail || *w.TimeoutSeconds != 3 || w.NamespaceSelector.MatchLabels["lockstep.dev/webhook"] != "enabled" ||
		w.ClientConfig.Service == nil || w.ClientConfig.Service.Name != "lockstep-webhook" || w.ClientConfig.Service.Namespace != "lockstep" {
		t.Errorf("the webhook stored: failurePolicy %s, timeout %d, namespaceSelector %v, clientConfig %+v", *w.FailurePolicy, *w.TimeoutSeconds, w.NamespaceSelector, w.ClientConfig)
	}
	service := w.ClientConfig

	// The webhook down, on loopback: the stored configuration's clientConfig
	// pointed at a port nothing listens on, and back before each upgrade.
	down := fmt.Sprintf("https://127.0.0.1:%d/validate", testenv.FreePort(t))
	clientConfig := func(cc any) {
		t.Helper()
		c.Must(t, http.StatusOK, kubetest.Request{Method: http.MethodPatch, Path: vwcPath, ContentType: "application/json-patch+json",
			Body: []map[string]any{{"op": "replace", "path": "/webhooks/0/clientConfig", "value": cc}}})
	}
	upgrade := func(set ...string) {
		t.Helper()
		clientConfig(service)
		args := []string{"upgrade", "lockstep", chartDir, "--namespace", "lockstep", "--reuse-values"}
		for _, kv := range set {
			args = append(args, "--set", kv)
		}
		helm(args...)
		clientConfig(map[string]any{"url": down})
	}
	clientConfig(map[string]any{"url": down})
	c.Must(t, http.StatusOK, kubetest.Request{Method: http.MethodPatch, Path: "/api/v1/namespaces/lockstep",
		Body: map[string]any{"metadata": map[string]any{"labels": map[string]string{"lockstep.dev/webhook": "enabled"}}}})
	c.Must(t, http.StatusCreated, kubetest.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/lockstep/serviceaccounts",
		Body: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"}}})

	// expect creates a pod in namespace (a dry run: the API server calls the
	// webhook all the same, its sideEffects being None) until the answer is
	// the one wanted, for up to 20 s: the API server picks up a changed
	// webhook configuration within moments, not at once.
	expect := func(when, namespace string, refused bool) {
		t.Helper()
		var r *kubetest.Response
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			r = c.Do(t, kubetest.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/" + namespace + "/pods?dryRun=All", Body: pod("web")})
			got := r.Code != http.StatusCreated && strings.Contains(r.Message(), "images.lockstep.dev")
			if got == refused && (refused || r.Code == http.StatusCreated) || time.Now().After(deadline) {
				break
			}
		}
		switch {
		case refused && (r.Code == http.StatusCreated || !strings.Contains(r.Message(), "images.lockstep.dev")):
			t.Errorf("%s: a pod in %s: HTTP %d %.300s, want it refused by images.lockstep.dev", when, namespace, r.Code, r.Body)
		case !refused && r.Code != http.StatusCreated:
			t.Errorf("%s: a pod in %s: HTTP %d %.300s, want it admitted", when, namespace, r.Code, r.Body)
		}
	}
	expect("failurePolicy Fail", "shop", true)
	expect("failurePolicy Fail", "plain", false)
	expect("failurePolicy Fail", "lockstep", false)
	expect("failurePolicy Fail", "kube-system", false)

	upgrade("webhook.failurePolicy=Ignore")
	if w := stored(); *w.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("after the upgrade, failurePolicy %s, want Ignore", *w.FailurePolicy)
	}
	expect("failurePolicy Ignore", "shop", false)

	upgrade("webhook.failurePolicy=Fail", "webhook.namespaceSelection=all")
	if w := stored(); len(w.NamespaceSelector.MatchLabels) != 0 || *w.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("namespaceSelection all: matchLabels %v, failurePolicy %s; want none, Fail", w.NamespaceSelector.MatchLabels, *w.FailurePolicy)
	}
	expect("every namespace", "plain", true)
	expect("every namespace", "shop", true)
	expect("every namespace", "lockstep", false)
	expect("every namespace", "kube-system", false)

	clientConfig(service)
	helm("uninstall", "lockstep", "--namespace", "lockstep")
	if r := c.Do(t, kubetest.Request{Method: http.MethodGet, Path: vwcPath}); r.Code != http.StatusNotFound {
		t.Errorf("after helm uninstall, the webhook configuration: HTTP %d, want 404", r.Code)
	}
	expect("uninstalled", "shop", false)
}
