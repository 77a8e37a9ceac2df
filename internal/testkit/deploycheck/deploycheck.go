package deploycheck

import (
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
)

// Rules are the resources the webhook judges, as group/version/resource:
// its configuration must send these and no other (a kind left out is a way
// round it; one added, the webhook denies as not judged).
var Rules = []string{
	"/v1/pods", "/v1/pods/ephemeralcontainers",
	"apps/v1/deployments", "apps/v1/replicasets", "apps/v1/statefulsets", "apps/v1/daemonsets",
	"batch/v1/jobs", "batch/v1/cronjobs",
}

// WebhookRules checks w's rules: CREATE and UPDATE, namespaced, of exactly
// Rules.
func WebhookRules(t testing.TB, w admissionregistrationv1.ValidatingWebhook) {
	t.Helper()
	got := map[string]bool{}
	for _, r := range w.Rules {
		ops := slices.Clone(r.Operations)
		slices.Sort(ops)
		if !slices.Equal(ops, []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}) {
			t.Errorf("rule %+v: operations %q, want CREATE and UPDATE", r.Rule, r.Operations)
		}
		if r.Scope == nil || *r.Scope != admissionregistrationv1.NamespacedScope {
			t.Errorf("rule %+v: scope %v, want Namespaced", r.Rule, r.Scope)
		}
		for _, g := range r.APIGroups {
			for _, v := range r.APIVersions {
				for _, res := range r.Resources {
					got[g+"/"+v+"/"+res] = true
				}
			}
		}
	}
	for _, k := range Rules {
		if !got[k] {
			t.Errorf("no rule for %s", k)
		}
	}
	for k := range got {
		if !slices.Contains(Rules, k) {
			t.Errorf("a rule for %s, which the webhook does not judge (it would deny it)", k)
		}
	}
}

// ReachesService checks that w calls svc, at the handler's path, on a
// port of the Service that targets the container's https port, and that
// no object selector lets a pod opt itself out by a label.
func ReachesService(t testing.TB, w admissionregistrationv1.ValidatingWebhook, svc corev1.Service) {
	t.Helper()
	ref := w.ClientConfig.Service
	if ref == nil || w.ClientConfig.URL != nil {
		t.Errorf("clientConfig %+v, want a service reference", w.ClientConfig)
		return
	}
	if ref.Namespace != svc.Namespace || ref.Name != svc.Name || ref.Path == nil || *ref.Path != "/validate" {
		t.Errorf("clientConfig.service %s/%s path %v, want %s/%s path /validate", ref.Namespace, ref.Name, ref.Path, svc.Namespace, svc.Name)
	}
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == port && p.TargetPort.String() == "https" }) {
		t.Errorf("clientConfig.service port %d is not a port of the Service %v that targets https", port, svc.Spec.Ports)
	}
	if s := w.ObjectSelector; s != nil && (len(s.MatchLabels) > 0 || len(s.MatchExpressions) > 0) {
		t.Errorf("objectSelector %+v: an object selector lets a pod opt itself out by a label", s)
	}
}

// WebhookFlags checks c's command line against lockstep webhook's own
// flags: the webhook command, then --flag=value arguments of its flags,
// and LOCKSTEP_ keys of the ConfigMaps c reads with envFrom (among cms)
// that are the variables of its flags. It returns what they set: flag name
// (from the arguments) or variable (from the ConfigMaps) → value.
func WebhookFlags(t testing.TB, c *corev1.Container, cms []corev1.ConfigMap) map[string]string {
	t.Helper()
	cmd := app.New().Command("webhook")
	if cmd == nil {
		t.Fatal("lockstep has no webhook command")
		return nil
	}
	flags, env := map[string]bool{}, map[string]bool{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			flags[n] = true
		}
		if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
			for _, e := range ev.GetEnvVars() {
				env[e] = true
			}
		}
	}
	if len(c.Args) == 0 || c.Args[0] != "webhook" {
		t.Fatalf("args %q, want the webhook command", c.Args)
	}
	values := map[string]string{}
	for _, a := range c.Args[1:] {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !flags[name] {
			t.Errorf("argument %q is not a flag of lockstep webhook", a)
		}
		values[name] = value
	}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		i := slices.IndexFunc(cms, func(cm corev1.ConfigMap) bool { return cm.Name == ef.ConfigMapRef.Name })
		if i < 0 {
			t.Errorf("envFrom names ConfigMap %s, which is not in the deployment", ef.ConfigMapRef.Name)
			continue
		}
		for k, v := range cms[i].Data {
			if strings.HasPrefix(k, "LOCKSTEP_") {
				if !env[k] {
					t.Errorf("ConfigMap %s sets %s, which no flag of lockstep webhook reads", cms[i].Name, k)
				}
				values[k] = v
			}
		}
	}
	return values
}
