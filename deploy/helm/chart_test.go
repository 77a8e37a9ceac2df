package helm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// chartDir is the chart, relative to this package.
const chartDir = "lockstep"

// kustomizeValues are the values with which the chart renders what
// deploy/kubernetes holds, installed as release "lockstep" in the
// namespace "lockstep".
const kustomizeValues = "testdata/kustomize-values.yaml"

// helmBin returns the helm CLI: the clone's .cache/bin/helm
// (scripts/install-deps.sh builds it once per machine), or helm on PATH;
// it skips the test when there is none (fails it under
// LOCKSTEP_INTEGRATION=1).
func helmBin(t *testing.T) string {
	t.Helper()
	if p, err := filepath.Abs(filepath.Join("..", "..", ".cache", "bin", "helm")); err == nil {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return testenv.Require(t, "helm")
}

// runHelm runs helm with args, with a HOME and caches of the test's own
// (no repositories, no registry credentials of the user's), and returns its
// stdout, or an error holding its stderr.
func runHelm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBin(t), args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stderr.Bytes(), stdout.Bytes())
	}
	return stdout.Bytes(), nil
}

// render runs helm template for release in namespace with the values
// args (-f FILE, --set K=V), at Kubernetes 1.30.
func render(t *testing.T, release, namespace string, values ...string) ([]byte, error) {
	t.Helper()
	args := append([]string{"template", release, chartDir, "--namespace", namespace, "--kube-version", "1.30.0"}, values...)
	return runHelm(t, args...)
}

// object is one decoded Kubernetes object, as JSON decodes it.
type object = map[string]any

// decodeAll decodes every YAML document of raw into objects (JSON's
// types: numbers are float64), skipping empty documents.
func decodeAll(t *testing.T, where string, raw []byte) []object {
	t.Helper()
	var out []object
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
		var o object
		if err := json.Unmarshal(js, &o); err != nil {
			t.Fatalf("%s document %d is not an object: %v", where, i, err)
		}
		out = append(out, o)
	}
}

// keyOf names an object: apiVersion, kind, namespace/name.
func keyOf(o object) string {
	md, _ := o["metadata"].(map[string]any)
	return fmt.Sprintf("%v %v %v/%v", o["apiVersion"], o["kind"], md["namespace"], md["name"])
}

// byKey indexes objects by keyOf, failing on a duplicate.
func byKey(t *testing.T, where string, objs []object) map[string]object {
	t.Helper()
	m := map[string]object{}
	for _, o := range objs {
		k := keyOf(o)
		if _, dup := m[k]; dup {
			t.Errorf("%s: %s twice", where, k)
		}
		m[k] = o
	}
	return m
}

// kustomization is what the test reads of a kustomization.yaml. It is
// decoded strictly: a kustomization that starts to patch, prefix or
// relabel (a field this struct lacks) fails the test until the comparison
// is taught what the field does.
type kustomization struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Resources  []string `yaml:"resources"`
}

// kustomizeBuild returns the objects `kubectl kustomize DIR` builds: the
// documents of every resource the kustomization lists, folders followed;
// an error for a kustomization field it does not know.
func kustomizeBuild(t *testing.T, dir string) ([]object, error) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var k kustomization
	if err := dec.Decode(&k); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %v (teach TestChartMatchesKustomize the field)", dir, err)
	}
	var out []object
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			objs, err := kustomizeBuild(t, p)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, decodeAll(t, p, b)...)
	}
	return out, nil
}

// helmLabels are the labels Helm charts add to every object (and the
// chart to its selectors, so that two releases do not select each
// other's pods), which the kustomize manifests do not have.
var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}

// normalize removes from a rendered object what only the chart has, and
// must have: Helm's labels, from every label map and selector, and the
// pod template's checksum/config annotation (a new configuration rolls the
// pods). Nothing else.
func normalize(o object) {
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			if key == "labels" || key == "matchLabels" || key == "selector" {
				for _, l := range helmLabels {
					delete(v, l)
				}
			}
			for k, c := range v {
				walk(c, k)
				if m, ok := c.(map[string]any); ok && len(m) == 0 && (k == "labels" || k == "annotations") {
					delete(v, k)
				}
			}
		case []any:
			for _, c := range v {
				walk(c, "")
			}
		}
	}
	if spec, ok := o["spec"].(map[string]any); ok {
		if tmpl, ok := spec["template"].(map[string]any); ok {
			if md, ok := tmpl["metadata"].(map[string]any); ok {
				if a, ok := md["annotations"].(map[string]any); ok {
					delete(a, "checksum/config")
				}
			}
		}
	}
	walk(o, "")
}

// TestChartMatchesKustomize is the guard against drift: the chart,
// rendered with testdata/kustomize-values.yaml as release "lockstep" in
// the namespace "lockstep", holds exactly the objects of deploy/kubernetes
// (kubectl apply -k deploy/kubernetes, then deploy/kubernetes/webhook) and
// of deploy/kubernetes/cert-manager, field for field, but for Helm's own
// labels and the checksum annotation (normalize). A change to one that is
// not made to the other fails here.
func TestChartMatchesKustomize(t *testing.T) {
	raw, err := render(t, "lockstep", "lockstep", "-f", kustomizeValues)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := drift(t, filepath.Join("..", "kubernetes"), raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// drift compares the kustomize tree at dir (the base, its webhook overlay
// and cert-manager/) with a rendering of the chart, and returns every
// difference: an object in one and not the other, or one that differs.
func drift(t *testing.T, dir string, rendering []byte) ([]string, error) {
	t.Helper()
	want, err := kustomizeBuild(t, dir)
	if err != nil {
		return nil, err
	}
	overlay, err := kustomizeBuild(t, filepath.Join(dir, "webhook"))
	if err != nil {
		return nil, err
	}
	want = append(want, overlay...)
	certs, err := filepath.Glob(filepath.Join(dir, "cert-manager", "*.yaml"))
	if err != nil || len(certs) == 0 {
		return nil, fmt.Errorf("no cert-manager files in %s: %v", dir, err)
	}
	for _, f := range certs {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		want = append(want, decodeAll(t, f, b)...)
	}
	got := decodeAll(t, "helm template", rendering)
	for _, o := range got {
		normalize(o)
	}
	wantBy, gotBy := byKey(t, "deploy/kubernetes", want), byKey(t, "the chart", got)
	if len(wantBy) < 10 {
		return nil, fmt.Errorf("only %d kustomize objects: %v", len(wantBy), slices.Sorted(maps.Keys(wantBy)))
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(wantBy)) {
		g, ok := gotBy[k]
		if !ok {
			diffs = append(diffs, k+" is in deploy/kubernetes, not in the chart")
			continue
		}
		if d := cmp.Diff(wantBy[k], g); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s differs (-deploy/kubernetes +chart):\n%s", k, d))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(gotBy)) {
		if _, ok := wantBy[k]; !ok {
			diffs = append(diffs, k+" is in the chart, not in deploy/kubernetes")
		}
	}
	return diffs, nil
}

// TestDriftIsCaught holds the guard itself to account: a copy of
// deploy/kubernetes changed in each way a change could drift (a field, a
// label, an object added or dropped, a kustomize transformer the
// comparison does not model) is reported against the unchanged chart; the
// unchanged copy is not.
func TestDriftIsCaught(t *testing.T) {
	raw, err := render(t, "lockstep", "lockstep", "-f", kustomizeValues)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file, old, new string
		want                 string // in a difference, or in the error
	}{
		{"unchanged", "", "", "", ""},
		{"a replica more", "deployment.yaml", "replicas: 2", "replicas: 3", "replicas"},
		{"a flag changed", "deployment.yaml", "--unmanaged=deny", "--unmanaged=allow", "--unmanaged=allow"},
		{"a label changed", "service.yaml", "app.kubernetes.io/part-of: lockstep", "app.kubernetes.io/part-of: lockstep-edge", "part-of"},
		{"failurePolicy", "webhook/validatingwebhookconfiguration.yaml", "failurePolicy: Fail", "failurePolicy: Ignore", "failurePolicy"},
		{"a namespace no longer excluded", "webhook/validatingwebhookconfiguration.yaml", `"lockstep", "cert-manager"]`, `"lockstep"]`, "cert-manager"},
		{"an object dropped", "kustomization.yaml", "  - pdb.yaml\n", "", "PodDisruptionBudget lockstep/lockstep-webhook is in the chart, not in deploy/kubernetes"},
		{"an object added", "pdb.yaml", "minAvailable: 1\n", "minAvailable: 1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: lockstep\n", "v1 ConfigMap lockstep/extra is in deploy/kubernetes, not in the chart"},
		{"a cert-manager duration", "cert-manager/certificate.yaml", "duration: 2160h", "duration: 720h", "2160h"},
		{"a transformer", "kustomization.yaml", "kind: Kustomization\n", "kind: Kustomization\nnamePrefix: edge-\n", "teach TestChartMatchesKustomize"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kubernetes")
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "kubernetes"))); err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				p := filepath.Join(dir, tt.file)
				b, err := os.ReadFile(p)
				if err != nil || !bytes.Contains(b, []byte(tt.old)) {
					t.Fatalf("%s lacks %q: %v", tt.file, tt.old, err)
				}
				if err := os.WriteFile(p, bytes.Replace(b, []byte(tt.old), []byte(tt.new), 1), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			diffs, err := drift(t, dir, raw)
			all := strings.Join(diffs, "\n")
			if err != nil {
				all = err.Error()
			}
			switch {
			case tt.want == "" && all != "":
				t.Errorf("the unchanged copy is reported: %s", all)
			case tt.want != "" && !strings.Contains(all, tt.want):
				t.Errorf("the change is not reported (want %q): %q", tt.want, all)
			}
		})
	}
}

// TestLint runs helm lint --strict: the chart with the kustomize values and
// with the other shapes of install (routes, keyless, a TLS Secret of one's
// own) passes; with no values, or bad ones, it fails; and below
// Kubernetes 1.30 (docs/kubernetes.md's minimum) the chart is refused.
func TestLint(t *testing.T) {
	for name, values := range map[string][]string{
		"kustomize": {"-f", kustomizeValues},
		"routes": {"--set", "store=s3://releases/p", "--set", "trust.kmsKey=awskms:///alias/release",
			"--set", "routes[0].release=web", "--set", "routes[0].namespaces={shop}"},
		"keyless": {"--set", "manifest=https://releases.example.com/web.json", "--set", "release=web",
			"--set", "trust.keyless.certificateIdentity=https://github.com/acme/web/.github/workflows/release.yml@refs/heads/main",
			"--set", "trust.keyless.certificateOidcIssuer=https://token.actions.githubusercontent.com"},
		"tls secret": {"-f", kustomizeValues, "--set", "tls.certManager.enabled=false", "--set", "tls.existingSecret=webhook-tls",
			"--set", "tls.caBundle=" + caBundle},
	} {
		args := append([]string{"lint", "--strict", chartDir, "--namespace", "lockstep", "--kube-version", "1.30.0"}, values...)
		if out, err := runHelm(t, args...); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
	// Bad values fail at lint too (values.schema.json; helm lint runs the
	// templates' fail and required leniently, so every check that matters
	// is in the schema).
	for _, bad := range [][]string{nil, {"-f", kustomizeValues, "--set", "webhook.failurepolicy=Ignore"}, {"-f", kustomizeValues, "--set", "trust.kmsKey=awskms:///alias/k"}} {
		args := append([]string{"lint", "--strict", chartDir, "--kube-version", "1.30.0"}, bad...)
		if out, err := runHelm(t, args...); err == nil || !strings.Contains(err.Error(), "[ERROR] values.yaml") {
			t.Errorf("helm lint %q: %v\n%s; want the values refused", bad, err, out)
		}
	}
	if _, err := render(t, "lockstep", "lockstep", "-f", kustomizeValues, "--kube-version", "1.29.9"); err == nil ||
		!strings.Contains(err.Error(), "chart requires kubeVersion") {
		t.Errorf("helm template at Kubernetes 1.29: %v; want the chart's kubeVersion to refuse it", err)
	}
}

// caBundle is a base64 PEM CA certificate, as tls.caBundle takes it (its
// content is not read by the chart).
const caBundle = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

// TestBadValues: values that are not what the chart takes are refused at
// helm template (and so at lint, install and upgrade), naming the value;
// above all every value that would make the webhook admit what it must
// not (an unsigned manifest, a setting misspelt and so ignored, a pod
// opting itself out, a variable slipped past the values) fails.
func TestBadValues(t *testing.T) {
	base := []string{"-f", kustomizeValues}
	for _, tt := range []struct {
		name   string
		values []string
		want   string
	}{
		{"no values", nil, "at '/store': minLength"},
		{"no release", []string{"--set", "store=s3://releases/p", "--set-file", "trust.publicKey=testdata/cosign.pub"}, "at '/release': minLength"},
		{"no signer", []string{"--set", "store=s3://releases/p", "--set", "release=web"}, "at '/trust': 'oneOf' failed"},
		{"two signers", append(base, "--set", "trust.kmsKey=awskms:///alias/k"), "at '/trust': 'oneOf' failed"},
		{"unsigned manifests", append(base, "--set", "insecureAllowUnsigned=true"), "additional properties 'insecureAllowUnsigned' not allowed"},
		{"unsigned manifests under trust", append(base, "--set", "trust.insecureAllowUnsigned=true"), "insecureAllowUnsigned"},
		{"a misspelt failurePolicy", append(base, "--set", "webhook.failurepolicy=Fail"), "failurepolicy"},
		{"failurePolicy in lower case", append(base, "--set", "webhook.failurePolicy=fail"), "failurePolicy"},
		{"an unknown mode", append(base, "--set", "webhook.mode=audit"), "mode"},
		{"unmanaged yes", append(base, "--set", "webhook.unmanaged=yes"), "unmanaged"},
		{"an object selector", append(base, "--set", "webhook.objectSelector.matchLabels.lockstep=skip"), "objectSelector"},
		{"rules of one's own", append(base, "--set", "webhook.rules[0].resources={configmaps}"), "rules"},
		{"a timeout over 30 s", append(base, "--set", "webhook.timeoutSeconds=31"), "timeoutSeconds"},
		{"a timeout as a string", append(base, "--set-string", "webhook.timeoutSeconds=5"), "timeoutSeconds"},
		{"store and manifest", append(base, "--set", "manifest=https://releases.example.com/web.json"), "at '/manifest': maxLength"},
		{"an http manifest", []string{"--set", "manifest=http://releases.example.com/web.json", "--set", "release=web", "--set", "trust.kmsKey=awskms:///alias/k"}, "manifest"},
		{"a store that is not s3", append(base, "--set", "store=https://bucket/p"), "store"},
		{"release and routes", append(base, "--set", "routes[0].release=web"), "at '/routes': maxItems"},
		{"routes without a store", []string{"--set", "manifest=https://r.example.com/m.json", "--set", "trust.kmsKey=awskms:///alias/k", "--set", "routes[0].release=web"}, "at '/store': minLength"},
		{"a route with null namespaces", []string{"--set", "store=s3://releases/p", "--set", "trust.kmsKey=awskms:///alias/k", "--set", "routes[0].release=web", "--set", "routes[0].namespaces=null"}, "namespaces"},
		{"a route with an empty list", []string{"--set", "store=s3://releases/p", "--set", "trust.kmsKey=awskms:///alias/k", "--set", "routes[0].release=web", "--set-json", "routes[0].repositories=[]"}, "repositories"},
		{"a route key of its own", []string{"--set", "store=s3://releases/p", "--set", "trust.kmsKey=awskms:///alias/k", "--set", "routes[0].release=web", "--set", "routes[0].namespace=shop"}, "namespace"},
		{"a release name that injects a variable", append(base, "--set-json", `release="web\nLOCKSTEP_INSECURE_ALLOW_UNSIGNED: \"true\""`), "release"},
		{"a channel in upper case", append(base, "--set", "channel=Production"), "channel"},
		{"a public key that is not PEM", append(base, "--set", "trust.publicKey=cosign.pub"), "publicKey"},
		{"a KMS URI that is a file", append(base[:0:0], "--set", "store=s3://releases/p", "--set", "release=web", "--set", "trust.kmsKey=/etc/cosign.pub"), "kmsKey"},
		{"keyless without an issuer", []string{"--set", "store=s3://releases/p", "--set", "release=web", "--set", "trust.keyless.certificateIdentity=x@example.com"}, "at '/trust/keyless/certificateOidcIssuer': minLength"},
		{"keyless without an identity", []string{"--set", "store=s3://releases/p", "--set", "release=web", "--set", "trust.keyless.certificateOidcIssuer=https://accounts.google.com"}, "at '/trust/keyless/certificateIdentity': minLength"},
		{"keyless offline without a root", []string{"--set", "store=s3://releases/p", "--set", "release=web", "--set", "trust.keyless.certificateIdentity=x@example.com",
			"--set", "trust.keyless.certificateOidcIssuer=https://accounts.google.com", "--set", "trust.keyless.offline=true"}, "at '/trust/keyless/trustedRoot': minLength"},
		{"a LOCKSTEP_ variable", append(base, "--set", "extraEnv[0].name=LOCKSTEP_INSECURE_ALLOW_UNSIGNED", "--set-string", "extraEnv[0].value=true"), "extraEnv"},
		{"GOMEMLIMIT by hand", append(base, "--set", "extraEnv[0].name=GOMEMLIMIT", "--set", "extraEnv[0].value=1"), "extraEnv"},
		{"no Secret without cert-manager", append(base, "--set", "tls.certManager.enabled=false"), "at '/tls/existingSecret': minLength"},
		{"no caBundle without cert-manager", append(base, "--set", "tls.certManager.enabled=false", "--set", "tls.existingSecret=s"), "at '/tls/caBundle': minLength"},
		{"a caBundle that is PEM, not base64", append(base, "--set", "tls.certManager.enabled=false", "--set", "tls.existingSecret=s",
			"--set", "tls.caBundle=-----BEGIN CERTIFICATE-----"), "caBundle"},
		{"an issuer kind of another group", append(base, "--set", "tls.certManager.issuerRef.name=i", "--set", "tls.certManager.issuerRef.kind=Secret"), "kind"},
		{"a PodDisruptionBudget that blocks drains", append(base, "--set", "replicas=1"), "podDisruptionBudget.minAvailable must be below replicas"},
		{"no replicas", append(base, "--set", "replicas=0", "--set", "podDisruptionBudget.enabled=false"), "replicas"},
		{"an image digest that is a tag", append(base, "--set", "image.digest=latest"), "digest"},
		{"a refresh that is not a duration", append(base, "--set", "refresh=30"), "refresh"},
		{"opt-in with its label removed", append(base, "--set", `webhook.optInLabels.lockstep\.dev/webhook=null`), "at '/webhook/optInLabels': minProperties"},
		{"a namespace selection of another name", append(base, "--set", "webhook.namespaceSelection=labelled"), "namespaceSelection"},
		{"an excluded namespace that is not a name", append(base, "--set", "webhook.excludeNamespaces={Kube-System}"), "excludeNamespaces"},
	} {
		out, err := render(t, "lockstep", "lockstep", tt.values...)
		if err == nil {
			t.Errorf("%s: helm template succeeded, want it refused (%q):\n%.400s", tt.name, tt.want, out)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v\nwant the error to say %q", tt.name, err, tt.want)
		}
	}
	// The webhook never governs the namespace it runs in: installed into
	// default (helm install without -n), the pods there would go unjudged.
	if out, err := render(t, "lockstep", "default", base...); err == nil || !strings.Contains(err.Error(), "a namespace of its own") {
		t.Errorf("installed into namespace default: %v\n%.400s; want it refused", err, out)
	}
}
