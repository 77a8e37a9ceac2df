package kubernetes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
)

// TestKustomization checks that each kustomization lists every file of its
// directory, and that `kubectl apply -k deploy/kubernetes` cannot block a
// cluster: the ValidatingWebhookConfiguration is only in the webhook
// overlay, applied last, once the webhook is ready and its caBundle known.
func TestKustomization(t *testing.T) {
	for dir, want := range map[string]func(kind string) bool{
		".":       func(kind string) bool { return kind != "ValidatingWebhookConfiguration" },
		"webhook": func(kind string) bool { return kind == "ValidatingWebhookConfiguration" },
	} {
		raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			APIVersion string   `yaml:"apiVersion"`
			Kind       string   `yaml:"kind"`
			Resources  []string `yaml:"resources"`
		}
		if err := yaml.Unmarshal(raw, &k); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "kustomization.yaml" })
		got := slices.Clone(k.Resources)
		for i := range got {
			got[i] = filepath.Join(dir, got[i])
		}
		slices.Sort(got)
		if k.Kind != "Kustomization" || !slices.Equal(got, files) {
			t.Errorf("%s/kustomization.yaml resources %q, want every file: %q", dir, k.Resources, files)
		}
		for _, f := range files {
			for _, kind := range kinds(t, f) {
				if !want(kind) {
					t.Errorf("%s (applied by kubectl apply -k %s) holds a %s", f, filepath.Join("deploy/kubernetes", dir), kind)
				}
			}
		}
	}
}

// kinds returns the kind of every document of a YAML file.
func kinds(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc struct {
			Kind string `yaml:"kind"`
		}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, doc.Kind)
	}
}

// envName is what a POSIX shell and every runtime take as an environment
// variable name; envFrom skips (with only an event) a key that is not one.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// TestConfigMapKeys checks that every key of a ConfigMap the Deployment
// reads with envFrom is an environment variable name, and that the files
// it mounts from a ConfigMap exist in it.
func TestConfigMapKeys(t *testing.T) {
	o := load(t)
	cms := map[string]corev1.ConfigMap{}
	for _, cm := range o.configMaps {
		cms[cm.Name] = cm
	}
	pod := one(t, "Deployments", o.deployments).Spec.Template.Spec
	envFrom := 0
	for _, c := range pod.Containers {
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef == nil {
				continue
			}
			envFrom++
			cm, ok := cms[ef.ConfigMapRef.Name]
			if !ok {
				t.Errorf("envFrom names ConfigMap %s, which is not in the deployment", ef.ConfigMapRef.Name)
			}
			for k := range cm.Data {
				if !envName.MatchString(k) {
					t.Errorf("ConfigMap %s, read with envFrom, has key %q, which is not an environment variable name", cm.Name, k)
				}
			}
		}
	}
	if envFrom == 0 {
		t.Error("the container reads no ConfigMap with envFrom")
	}
	for _, v := range pod.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		cm, ok := cms[v.ConfigMap.Name]
		if !ok {
			t.Errorf("volume %s mounts ConfigMap %s, which is not in the deployment", v.Name, v.ConfigMap.Name)
		}
		for _, it := range v.ConfigMap.Items {
			if _, ok := cm.Data[it.Key]; !ok {
				t.Errorf("volume %s mounts key %s, which ConfigMap %s lacks", v.Name, it.Key, cm.Name)
			}
		}
	}
}

// TestMinimumVersion checks that docs/kubernetes.md names the minimum
// Kubernetes version, and that it is at least what the manifests use:
// the preStop sleep action (1.30), the kubernetes.io/metadata.name label
// (1.22), policy/v1 PodDisruptionBudgets (1.21).
func TestMinimumVersion(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "kubernetes.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Kubernetes 1\.(\d+) or later`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("docs/kubernetes.md does not say \"Kubernetes 1.N or later\"")
	}
	minor, _ := strconv.Atoi(string(m[1]))
	need, why := 22, "the kubernetes.io/metadata.name label"
	for _, c := range one(t, "Deployments", load(t).deployments).Spec.Template.Spec.Containers {
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
			need, why = 30, "the preStop sleep action of container "+c.Name
		}
	}
	if minor < need {
		t.Errorf("docs/kubernetes.md says Kubernetes 1.%d, but %s needs 1.%d", minor, why, need)
	}
	if k, _ := os.ReadFile("kustomization.yaml"); !bytes.Contains(k, []byte(fmt.Sprintf("Kubernetes 1.%d or later", minor))) {
		t.Errorf("kustomization.yaml does not say Kubernetes 1.%d or later, as docs/kubernetes.md does", minor)
	}
}

// deref shows a pointer's value in a message ("<nil>" for nil).
func deref[T any](p *T) any {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestCertManager checks the optional cert-manager files against the
// deployment: the serving Certificate writes the Secret the Deployment
// mounts, names the Service's DNS name, and is the one the webhook
// configuration's CA injection names.
func TestCertManager(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("cert-manager", "certificate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type certificate struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name, Namespace string
		} `yaml:"metadata"`
		Spec struct {
			SecretName string   `yaml:"secretName"`
			DNSNames   []string `yaml:"dnsNames"`
			IsCA       bool     `yaml:"isCA"`
		} `yaml:"spec"`
	}
	var serving *certificate
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var c certificate
		if err := dec.Decode(&c); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if c.Metadata.Namespace != namespace {
			t.Errorf("%s %s is in namespace %q, want %q", c.Kind, c.Metadata.Name, c.Metadata.Namespace, namespace)
		}
		if c.Kind == "Certificate" && !c.Spec.IsCA {
			serving = &c
		}
	}
	if serving == nil {
		t.Fatal("no serving Certificate")
	}
	o := load(t)
	svc, vwc, d := o.services[0], o.webhooks[0], o.deployments[0]
	if !slices.Contains(serving.Spec.DNSNames, svc.Name+"."+svc.Namespace+".svc") {
		t.Errorf("dnsNames %q lack %s.%s.svc, the name the API server calls", serving.Spec.DNSNames, svc.Name, svc.Namespace)
	}
	if !slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == serving.Spec.SecretName
	}) {
		t.Errorf("the Deployment does not mount the Secret %s the Certificate writes", serving.Spec.SecretName)
	}
	if got, want := vwc.Annotations["cert-manager.io/inject-ca-from"], serving.Metadata.Namespace+"/"+serving.Metadata.Name; got != want {
		t.Errorf("inject-ca-from %q, want %q", got, want)
	}
}
