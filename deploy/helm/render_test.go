package helm

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kjson "sigs.k8s.io/json"

	"github.com/lockstep-dev/lockstep/admission/webhook"
	"github.com/lockstep-dev/lockstep/internal/imagename"
	"github.com/lockstep-dev/lockstep/internal/testkit/deploycheck"
)

// rendered is a rendering of the chart, each object decoded strictly into
// its API type (cert-manager's kinds, which k8s.io/api lacks, as objects).
type rendered struct {
	namespace       string
	namespaces      []corev1.Namespace
	serviceAccounts []corev1.ServiceAccount
	configMaps      map[string]corev1.ConfigMap
	deployment      *appsv1.Deployment
	services        []corev1.Service
	pdbs            []policyv1.PodDisruptionBudget
	webhooks        []admissionregistrationv1.ValidatingWebhookConfiguration
	certificates    []object
	issuers         []object
}

// decodeRendered decodes helm template's output, refusing unknown fields
// (the API server's strict field validation) and kinds this test does not
// know.
func decodeRendered(t *testing.T, namespace string, raw []byte) *rendered {
	t.Helper()
	r := &rendered{namespace: namespace, configMaps: map[string]corev1.ConfigMap{}}
	for i, o := range decodeAll(t, "helm template", raw) {
		js, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		where := fmt.Sprintf("document %d (%s)", i, keyOf(o))
		switch fmt.Sprint(o["apiVersion"], " ", o["kind"]) {
		case "v1 Namespace":
			r.namespaces = append(r.namespaces, strict[corev1.Namespace](t, where, js))
		case "v1 ServiceAccount":
			r.serviceAccounts = append(r.serviceAccounts, strict[corev1.ServiceAccount](t, where, js))
		case "v1 ConfigMap":
			cm := strict[corev1.ConfigMap](t, where, js)
			r.configMaps[cm.Name] = cm
		case "apps/v1 Deployment":
			if r.deployment != nil {
				t.Fatalf("%s: a second Deployment", where)
			}
			d := strict[appsv1.Deployment](t, where, js)
			r.deployment = &d
		case "v1 Service":
			r.services = append(r.services, strict[corev1.Service](t, where, js))
		case "policy/v1 PodDisruptionBudget":
			r.pdbs = append(r.pdbs, strict[policyv1.PodDisruptionBudget](t, where, js))
		case "admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration":
			r.webhooks = append(r.webhooks, strict[admissionregistrationv1.ValidatingWebhookConfiguration](t, where, js))
		case "cert-manager.io/v1 Certificate":
			r.certificates = append(r.certificates, o)
		case "cert-manager.io/v1 Issuer":
			r.issuers = append(r.issuers, o)
		default:
			t.Fatalf("%s: a kind this test does not know; teach it", where)
		}
	}
	if r.deployment == nil || len(r.services) != 1 || len(r.serviceAccounts) != 1 {
		t.Fatalf("want one Deployment, Service and ServiceAccount, got %v, %d, %d", r.deployment != nil, len(r.services), len(r.serviceAccounts))
	}
	return r
}

func strict[T any](t *testing.T, where string, js []byte) T {
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

// container is the webhook's container and what it is configured with:
// its arguments as flag → value, and its ConfigMap's LOCKSTEP_ variables.
type container struct {
	*corev1.Container
	args map[string]string
	env  map[string]string
}

// config checks that every argument of the container is a flag of
// lockstep webhook, every variable of the ConfigMap it reads with envFrom
// a variable of one (deploycheck.WebhookFlags), no variable of the
// container's own env a LOCKSTEP_ one, and that nothing is insecure; it
// returns them.
func (r *rendered) config(t *testing.T) container {
	t.Helper()
	pod := r.deployment.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := container{Container: &pod.Containers[0], args: map[string]string{}, env: map[string]string{}}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil {
		t.Fatalf("envFrom %+v, want one ConfigMap", c.EnvFrom)
	}
	if _, ok := r.configMaps[c.EnvFrom[0].ConfigMapRef.Name]; !ok {
		t.Fatalf("envFrom names ConfigMap %s, which the chart does not render", c.EnvFrom[0].ConfigMapRef.Name)
	}
	for k, v := range deploycheck.WebhookFlags(t, c.Container, slices.Collect(maps.Values(r.configMaps))) {
		if strings.HasPrefix(k, "LOCKSTEP_") {
			c.env[k] = v
		} else {
			c.args[k] = v
		}
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "LOCKSTEP_") {
			t.Errorf("the container sets %s itself, past the ConfigMap", e.Name)
		}
	}
	for k := range c.env {
		if strings.Contains(k, "INSECURE") {
			t.Errorf("the webhook runs with %s", k)
		}
	}
	for k := range c.args {
		if strings.HasPrefix(k, "insecure") {
			t.Errorf("the webhook runs with --%s", k)
		}
	}
	return c
}

// file returns what the container sees at path, from the ConfigMap
// volume mounted over it ("" and false when nothing the chart renders is
// mounted there; existing names a ConfigMap the user brings).
func (r *rendered) file(t *testing.T, c container, path string) (content string, existing string, ok bool) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(path, m.MountPath+"/") {
			continue
		}
		i := slices.IndexFunc(r.deployment.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			t.Fatalf("volume mount %s names no volume", m.Name)
		}
		v := r.deployment.Spec.Template.Spec.Volumes[i]
		if v.ConfigMap == nil {
			return "", "", false
		}
		rel := strings.TrimPrefix(path, m.MountPath+"/")
		key := rel
		if len(v.ConfigMap.Items) > 0 {
			j := slices.IndexFunc(v.ConfigMap.Items, func(it corev1.KeyToPath) bool { return it.Path == rel })
			if j < 0 {
				return "", "", false
			}
			key = v.ConfigMap.Items[j].Key
		}
		cm, ok := r.configMaps[v.ConfigMap.Name]
		if !ok {
			return "", v.ConfigMap.Name, true
		}
		data, ok := cm.Data[key]
		return data, "", ok
	}
	return "", "", false
}

// systemNamespaces are never governed, whatever the values.
var systemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// consistent checks what must hold of every rendering: the selectors
// select the webhook's pods, the webhook configuration reaches its Service
// and never governs the system namespaces or the release's own, the rules
// are the fixed set, the TLS Secret mounted is the one issued or given,
// and every file the configuration names is mounted.
func (r *rendered) consistent(t *testing.T) container {
	t.Helper()
	d := r.deployment
	podLabels := labels.Set(d.Spec.Template.Labels)
	selects := func(what string, sel *metav1.LabelSelector) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || s.Empty() || !s.Matches(podLabels) {
			t.Errorf("%s's selector %v does not select the webhook's pods %v", what, sel, podLabels)
		}
	}
	selects("the Deployment", d.Spec.Selector)
	for _, p := range r.pdbs {
		selects("the PodDisruptionBudget", p.Spec.Selector)
		if p.Spec.MinAvailable.IntValue() >= int(*d.Spec.Replicas) {
			t.Errorf("minAvailable %v with %d replicas: drains block", p.Spec.MinAvailable, *d.Spec.Replicas)
		}
	}
	if aa := d.Spec.Template.Spec.Affinity; aa != nil && aa.PodAntiAffinity != nil {
		for _, term := range aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			selects("the anti-affinity", term.PodAffinityTerm.LabelSelector)
		}
	}
	svc := r.services[0]
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
		t.Errorf("the Service's selector %v does not select the pods %v", svc.Spec.Selector, podLabels)
	}
	sa := r.serviceAccounts[0]
	if d.Spec.Template.Spec.ServiceAccountName != sa.Name || sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("serviceAccountName %q, ServiceAccount %s automount %v: want the chart's, with no token", d.Spec.Template.Spec.ServiceAccountName, sa.Name, sa.AutomountServiceAccountToken)
	}
	for _, m := range []metav1.ObjectMeta{d.ObjectMeta, svc.ObjectMeta, sa.ObjectMeta} {
		if m.Namespace != r.namespace {
			t.Errorf("%s is in namespace %q, want the release's %q", m.Name, m.Namespace, r.namespace)
		}
	}

	c := r.config(t)
	var tlsSecret string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "tls" && v.Secret != nil {
			tlsSecret = v.Secret.SecretName
		}
	}
	if c.args["tls-cert"] != "/etc/lockstep/tls/tls.crt" || c.args["tls-key"] != "/etc/lockstep/tls/tls.key" || tlsSecret == "" ||
		!slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "tls" && m.MountPath == "/etc/lockstep/tls" }) {
		t.Errorf("--tls-cert %s --tls-key %s: want them on the mounted TLS Secret (%q)", c.args["tls-cert"], c.args["tls-key"], tlsSecret)
	}
	for _, k := range []string{"LOCKSTEP_ROUTES", "LOCKSTEP_TRUSTED_ROOT", "LOCKSTEP_KEY"} {
		p, ok := c.env[k]
		if !ok || !strings.HasPrefix(p, "/") {
			continue
		}
		if content, existing, ok := r.file(t, c, p); !ok || (content == "" && existing == "") {
			t.Errorf("%s=%s: nothing the chart renders is mounted there", k, p)
		}
	}

	for _, cert := range r.certificates {
		spec, _ := cert["spec"].(map[string]any)
		if spec["isCA"] == true {
			continue
		}
		if spec["secretName"] != tlsSecret {
			t.Errorf("the Certificate writes %v, the Deployment mounts %s", spec["secretName"], tlsSecret)
		}
		dns := fmt.Sprint(spec["dnsNames"])
		if !strings.Contains(dns, svc.Name+"."+svc.Namespace+".svc ") && !strings.HasSuffix(dns, svc.Name+"."+svc.Namespace+".svc]") {
			t.Errorf("dnsNames %s lack %s.%s.svc, the name the API server calls", dns, svc.Name, svc.Namespace)
		}
	}

	for _, vwc := range r.webhooks {
		if len(vwc.Webhooks) != 1 {
			t.Fatalf("%d webhooks, want 1", len(vwc.Webhooks))
		}
		w := vwc.Webhooks[0]
		deploycheck.ReachesService(t, w, svc)
		deploycheck.WebhookRules(t, w)
		sel, err := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range append(slices.Clone(systemNamespaces), r.namespace) {
			all := labels.Set{"kubernetes.io/metadata.name": ns}
			for k, v := range w.NamespaceSelector.MatchLabels {
				all[k] = v
			}
			if sel.Matches(all) {
				t.Errorf("namespace %s, labelled %v, is governed", ns, all)
			}
		}
		if ca := vwc.Annotations["cert-manager.io/inject-ca-from"]; ca != "" {
			i := slices.IndexFunc(r.certificates, func(o object) bool {
				md, _ := o["metadata"].(map[string]any)
				return fmt.Sprintf("%v/%v", md["namespace"], md["name"]) == ca
			})
			if i < 0 {
				t.Errorf("inject-ca-from %s names no Certificate the chart renders", ca)
			}
		} else if len(w.ClientConfig.CABundle) == 0 {
			t.Error("no caBundle and no cert-manager injection: every call fails")
		}
	}
	return c
}

// TestRenders renders the chart in each shape of install, checks what
// must always hold (consistent), and what each shape asks for.
func TestRenders(t *testing.T) {
	pub, err := os.ReadFile(filepath.Join("testdata", "cosign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	const digest = "sha256:abababababababababababababababababababababababababababababababab"
	for _, tt := range []struct {
		name, release, namespace string
		values                   []string
		check                    func(t *testing.T, r *rendered, c container)
	}{
		{"the kustomize values", "lockstep", "lockstep", []string{"-f", kustomizeValues}, func(t *testing.T, r *rendered, c container) {
			if len(r.namespaces) != 1 || r.namespaces[0].Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
				t.Errorf("namespaces %v, want lockstep, Pod Security restricted", r.namespaces)
			}
			if c.args["mode"] != "enforce" || c.args["unmanaged"] != "deny" {
				t.Errorf("--mode=%s --unmanaged=%s, want enforce, deny", c.args["mode"], c.args["unmanaged"])
			}
		}},
		{"another release, namespace and name", "gate", "platform", []string{"--set", "store=s3://releases/lockstep", "--set", "release=web",
			"--set-file", "trust.publicKey=testdata/cosign.pub", "--set", "fullnameOverride=edge"}, func(t *testing.T, r *rendered, c container) {
			if r.deployment.Name != "edge-webhook" || r.webhooks[0].Name != "edge" || r.webhooks[0].Webhooks[0].ClientConfig.Service.Namespace != "platform" {
				t.Errorf("names %s, %s: want edge-webhook, edge, in platform", r.deployment.Name, r.webhooks[0].Name)
			}
			if len(r.namespaces) != 0 {
				t.Error("a Namespace rendered without namespace.create")
			}
			key, _, _ := r.file(t, c, c.env["LOCKSTEP_KEY"])
			if key != string(pub) {
				t.Errorf("the key mounted at %s is %q, want testdata/cosign.pub", c.env["LOCKSTEP_KEY"], key)
			}
			if c.env["LOCKSTEP_STORE"] != "s3://releases/lockstep" || c.env["LOCKSTEP_RELEASE"] != "web" || c.env["LOCKSTEP_CHANNEL"] != "production" {
				t.Errorf("configuration %v", c.env)
			}
		}},
		{"routes", "lockstep", "lockstep", []string{"--set", "store=s3://releases/lockstep", "--set", "trust.kmsKey=awskms:///alias/release",
			"--set", "routes[0].release=store-web", "--set", "routes[0].namespaces={store,store-canary}",
			"--set", "routes[1].release=payments", "--set", "routes[1].channel=canary", "--set", "routes[1].namespaces={payments}",
			"--set", "routes[1].repositories={registry.example.com/payments/api}"}, func(t *testing.T, r *rendered, c container) {
			if _, ok := c.env["LOCKSTEP_RELEASE"]; ok {
				t.Error("LOCKSTEP_RELEASE is set beside LOCKSTEP_ROUTES")
			}
			if c.env["LOCKSTEP_KEY"] != "awskms:///alias/release" {
				t.Errorf("LOCKSTEP_KEY=%q, want the KMS URI", c.env["LOCKSTEP_KEY"])
			}
			data, _, ok := r.file(t, c, c.env["LOCKSTEP_ROUTES"])
			if !ok {
				t.Fatalf("LOCKSTEP_ROUTES=%s is not mounted", c.env["LOCKSTEP_ROUTES"])
			}
			// The webhook's own parser is the judge of the file.
			routes, err := webhook.ParseRoutes([]byte(data), imagename.Names{})
			if err != nil {
				t.Fatalf("lockstep refuses the routes file the chart writes: %v\n%s", err, data)
			}
			want := []webhook.Route{{Release: "store-web", Namespaces: []string{"store", "store-canary"}},
				{Release: "payments", Channel: "canary", Namespaces: []string{"payments"}, Repositories: []string{"registry.example.com/payments/api"}}}
			if !slices.EqualFunc(routes.Routes, want, func(a, b webhook.Route) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
				t.Errorf("routes %+v, want %+v", routes.Routes, want)
			}
			if _, ok := r.configMaps["lockstep-webhook-trust"]; ok {
				t.Error("a trust ConfigMap rendered for a KMS key")
			}
		}},
		{"keyless, offline, a manifest URL", "lockstep", "lockstep", []string{"--set", "manifest=https://releases.example.com/web/production.json", "--set", "release=web",
			"--set", "trust.keyless.certificateIdentity=https://github.com/acme/web/.github/workflows/release.yml@refs/heads/main",
			"--set-json", `trust.keyless.certificateOidcIssuerRegexp="^https://token\\.actions\\.githubusercontent\\.com$"`,
			"--set-file", "trust.keyless.trustedRoot=testdata/cosign.pub", "--set", "trust.keyless.offline=true"}, func(t *testing.T, r *rendered, c container) {
			if c.env["LOCKSTEP_MANIFEST"] != "https://releases.example.com/web/production.json" || c.env["LOCKSTEP_STORE"] != "" || c.env["LOCKSTEP_CHANNEL"] != "" {
				t.Errorf("configuration %v: want the manifest URL, no store or channel", c.env)
			}
			if c.env["LOCKSTEP_CERTIFICATE_IDENTITY"] != "https://github.com/acme/web/.github/workflows/release.yml@refs/heads/main" ||
				c.args["certificate-oidc-issuer-regexp"] != `^https://token\.actions\.githubusercontent\.com$` || c.env["LOCKSTEP_OFFLINE"] != "true" {
				t.Errorf("keyless configuration %v %v", c.env, c.args)
			}
			if _, ok := c.env["LOCKSTEP_KEY"]; ok {
				t.Error("LOCKSTEP_KEY beside keyless (lockstep refuses both)")
			}
			root, _, ok := r.file(t, c, c.env["LOCKSTEP_TRUSTED_ROOT"])
			if !ok || root != string(pub) {
				t.Errorf("the trusted root mounted at %s: %q", c.env["LOCKSTEP_TRUSTED_ROOT"], root)
			}
		}},
		{"a key ConfigMap of one's own", "lockstep", "lockstep", []string{"--set", "store=s3://releases/p", "--set", "release=web", "--set", "trust.existingConfigMap=release-keys"},
			func(t *testing.T, r *rendered, c container) {
				if _, existing, ok := r.file(t, c, c.env["LOCKSTEP_KEY"]); !ok || existing != "release-keys" {
					t.Errorf("LOCKSTEP_KEY=%s is mounted from %q, want the ConfigMap release-keys", c.env["LOCKSTEP_KEY"], existing)
				}
				if _, ok := r.configMaps["lockstep-webhook-trust"]; ok {
					t.Error("a trust ConfigMap rendered beside the user's")
				}
			}},
		{"a TLS Secret of one's own", "lockstep", "lockstep", []string{"-f", kustomizeValues, "--set", "tls.certManager.enabled=false",
			"--set", "tls.existingSecret=webhook-tls", "--set", "tls.caBundle=" + caBundle}, func(t *testing.T, r *rendered, c container) {
			if len(r.certificates)+len(r.issuers) != 0 {
				t.Errorf("%d cert-manager objects without cert-manager", len(r.certificates)+len(r.issuers))
			}
			w := r.webhooks[0]
			if string(w.Webhooks[0].ClientConfig.CABundle) != "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" {
				t.Errorf("caBundle %q, want the one given", w.Webhooks[0].ClientConfig.CABundle)
			}
			if _, ok := w.Annotations["cert-manager.io/inject-ca-from"]; ok {
				t.Error("the cert-manager annotation without cert-manager")
			}
			if v := r.deployment.Spec.Template.Spec.Volumes[0]; v.Secret == nil || v.Secret.SecretName != "webhook-tls" {
				t.Errorf("TLS volume %+v, want the Secret webhook-tls", v)
			}
		}},
		{"an issuer of one's own", "lockstep", "lockstep", []string{"-f", kustomizeValues, "--set", "tls.certManager.issuerRef.name=corp-ca",
			"--set", "tls.certManager.issuerRef.kind=ClusterIssuer"}, func(t *testing.T, r *rendered, c container) {
			if len(r.issuers) != 0 || len(r.certificates) != 1 {
				t.Fatalf("%d issuers, %d certificates: want only the serving Certificate", len(r.issuers), len(r.certificates))
			}
			ref := r.certificates[0]["spec"].(map[string]any)["issuerRef"]
			if fmt.Sprint(ref) != "map[kind:ClusterIssuer name:corp-ca]" {
				t.Errorf("issuerRef %v", ref)
			}
		}},
		{"every namespace, more excluded, fail open, warn", "lockstep", "lockstep", []string{"-f", kustomizeValues, "--set", "webhook.namespaceSelection=all",
			"--set", "webhook.excludeNamespaces={monitoring}", "--set", "tls.certManager.namespace=certs", "--set", "webhook.failurePolicy=Ignore", "--set", "webhook.timeoutSeconds=10",
			"--set", "webhook.mode=warn"}, func(t *testing.T, r *rendered, c container) {
			w := r.webhooks[0].Webhooks[0]
			if len(w.NamespaceSelector.MatchLabels) != 0 || *w.FailurePolicy != admissionregistrationv1.Ignore || *w.TimeoutSeconds != 10 || c.args["mode"] != "warn" {
				t.Errorf("webhook %+v, --mode=%s", w, c.args["mode"])
			}
			sel, _ := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
			for ns, want := range map[string]bool{"shop": true, "cert-manager": true, "monitoring": false, "certs": false, "kube-system": false, "lockstep": false} {
				if got := sel.Matches(labels.Set{"kubernetes.io/metadata.name": ns}); got != want {
					t.Errorf("namespace %s governed: %v, want %v", ns, got, want)
				}
			}
		}},
		{"the webhook configuration left for later", "lockstep", "lockstep", []string{"-f", kustomizeValues, "--set", "webhook.enabled=false"},
			func(t *testing.T, r *rendered, c container) {
				if len(r.webhooks) != 0 {
					t.Error("a ValidatingWebhookConfiguration with webhook.enabled=false")
				}
			}},
		{"an image by digest, no PodDisruptionBudget, one replica", "lockstep", "lockstep", []string{"-f", kustomizeValues, "--set", "image.digest=" + digest,
			"--set", "replicas=1", "--set", "podDisruptionBudget.enabled=false", "--set", "extraEnv[0].name=HTTPS_PROXY",
			"--set", "extraEnv[0].value=http://proxy:3128"}, func(t *testing.T, r *rendered, c container) {
			if c.Image != "ghcr.io/lockstep-dev/lockstep:v0.1.0@"+digest {
				t.Errorf("image %s, want it by digest", c.Image)
			}
			if len(r.pdbs) != 0 || *r.deployment.Spec.Replicas != 1 {
				t.Errorf("%d PodDisruptionBudgets, %d replicas", len(r.pdbs), *r.deployment.Spec.Replicas)
			}
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "HTTPS_PROXY" && e.Value == "http://proxy:3128" }) {
				t.Errorf("env %v lacks HTTPS_PROXY", c.Env)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := render(t, tt.release, tt.namespace, tt.values...)
			if err != nil {
				t.Fatal(err)
			}
			r := decodeRendered(t, tt.namespace, raw)
			c := r.consistent(t)
			tt.check(t, r, c)
		})
	}
}
