package kubernetes

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"gopkg.in/yaml.v3"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
	"github.com/lockstep-dev/lockstep/internal/testkit/kubetest"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// The end-to-end tests run the shipped manifests and lockstep against a
// real kube-apiserver (internal/testkit/kubetest), one per package run.
func TestMain(m *testing.M) { os.Exit(kubetest.Run(m)) }

// release is a signed release, store-web generation 3, whose image web is
// a multi-arch index in a loopback registry, with another image of the
// same repository (Other) that the release does not have.
type release struct {
	*sigtest.Release
	// Manifest is the manifest's path (its signature beside it), Key the
	// public key's.
	Manifest, Key string
	// Repo is the image's repository; Other another digest of it
	// (OtherRef, as a reference).
	Repo     string
	Other    string
	OtherRef name.Digest
}

func newRelease(t *testing.T) *release {
	t.Helper()
	r := sigtest.NewRelease(t, nil)
	key := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(key, sigtest.PublicPEM(t, r.Key), 0o644); err != nil {
		t.Fatal(err)
	}
	other := r.Reg.PushImage(t, "store/web", "v2")
	return &release{Release: r, Manifest: r.WriteManifest(t, nil), Key: key, Repo: r.Index.Context().Name(), Other: other.DigestStr(), OtherRef: other}
}

// Digest is the release's index digest.
func (r *release) Digest() string { return r.Index.DigestStr() }

// lockstep runs the CLI in this process until ctx ends and returns its
// exit code, stdout and stderr.
func lockstep(ctx context.Context, args ...string) (int, string, string) {
	var stdout, stderr testenv.SyncBuffer
	a := app.New()
	a.Writer, a.ErrWriter = &stdout, &stderr
	err := a.RunContext(ctx, append([]string{"lockstep"}, args...))
	return app.Exit(err, &stderr), stdout.String(), stderr.String()
}

// webhookTLS is the webhook's serving certificate for 127.0.0.1 and the
// PEM of its CA (a ValidatingWebhookConfiguration's caBundle).
type webhookTLS struct {
	cert, key string
	caBundle  []byte
	pool      *tlstest.CA
}

func newWebhookTLS(t *testing.T) webhookTLS {
	t.Helper()
	dir := t.TempDir()
	ca := tlstest.NewCA(t)
	w := webhookTLS{cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key"), pool: ca}
	tlstest.WritePair(t, w.cert, w.key, ca.ValidFor(t, "127.0.0.1", time.Hour))
	caFile := filepath.Join(dir, "ca.crt")
	tlstest.WriteCert(t, caFile, ca.Cert)
	b, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	w.caBundle = b
	return w
}

// startWebhook runs `lockstep webhook` on a free loopback port with args
// until /readyz answers 200, and returns its address and a function that
// stops it (also called when the test ends).
func startWebhook(t *testing.T, tl webhookTLS, args ...string) (string, func()) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		code, _, stderr := lockstep(ctx, append([]string{"webhook", "--listen", addr, "--tls-cert", tl.cert, "--tls-key", tl.key, "--refresh", "1s"}, args...)...)
		done <- fmt.Sprintf("exit %d:\n%s", code, stderr)
	}()
	stopped := false
	var last string
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			last = <-done
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("webhook %s %v: %s", addr, args, last)
		}
	})
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig(tl)}}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case out := <-done:
			stopped = true
			t.Fatalf("lockstep webhook %v exited before it was ready: %s", args, out)
		default:
		}
		if resp, err := client.Get("https://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr, stop
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("lockstep webhook %v not ready within 30 s", args)
	return "", nil
}

// shippedWebhookConfiguration is deploy/kubernetes/webhook's
// ValidatingWebhookConfiguration as the repository ships it, named name,
// its clientConfig pointed at https://ADDR/validate with caBundle, and
// governing the namespaces labelled lockstep.dev/webhook=label: everything
// else (rules, failurePolicy, timeoutSeconds, matchPolicy, the system
// namespaces left out) as shipped.
func shippedWebhookConfiguration(t *testing.T, name, addr string, caBundle []byte, label string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	vwc := *one(t, "ValidatingWebhookConfigurations", load(t).webhooks)
	if len(vwc.Webhooks) != 1 || vwc.Webhooks[0].ClientConfig.Service == nil || vwc.Webhooks[0].ClientConfig.Service.Path == nil {
		t.Fatalf("the shipped configuration is not one webhook with a service and a path: %+v", vwc.Webhooks)
	}
	vwc.Name = name
	vwc.Annotations = nil // no cert-manager here: the caBundle is given
	w := &vwc.Webhooks[0]
	url := "https://" + addr + *w.ClientConfig.Service.Path
	w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
	if w.NamespaceSelector.MatchLabels[optInLabel] != optInValue {
		t.Fatalf("the shipped namespaceSelector %v has no %s=%s", w.NamespaceSelector.MatchLabels, optInLabel, optInValue)
	}
	w.NamespaceSelector.MatchLabels = map[string]string{optInLabel: label}
	return &vwc
}

// register creates the configuration in the API server.
func register(t *testing.T, c *kubetest.Cluster, vwc *admissionregistrationv1.ValidatingWebhookConfiguration) {
	t.Helper()
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", Body: vwc})
}

// waitFor sends r until ok holds for the answer (the API server picks a
// new webhook configuration up a moment after it is created) and returns
// that answer; after 30 s it fails the test with the last one. Send only
// requests that keep nothing (dry runs): one admitted before the
// configuration is live would stay.
func waitFor(t *testing.T, c *kubetest.Cluster, r kubetest.Request, ok func(*kubetest.Response) bool) *kubetest.Response {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp := c.Do(t, r)
		if ok(resp) {
			return resp
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: still HTTP %d %q after 30 s", r.Method, r.Path, resp.Code, resp.Message())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pod is a Pod named name (or generateName when name ends in "-") with
// one container "web" of image, extra fields merged into its spec.
func pod(name, image string, extra map[string]any) map[string]any {
	meta := map[string]any{"labels": map[string]string{"app": "web"}}
	if name[len(name)-1] == '-' {
		meta["generateName"] = name
	} else {
		meta["name"] = name
	}
	spec := map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}}
	for k, v := range extra {
		spec[k] = v
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
}

// auditEvent is what the tests read of an audit event.
type auditEvent struct {
	AuditID     string            `json:"auditID"`
	Stage       string            `json:"stage"`
	Annotations map[string]string `json:"annotations"`
}

// auditAnnotations reads the audit log's ResponseComplete events, keyed by
// audit ID, until every one of ids is there (the log is written as the
// requests complete) or 10 s pass.
func auditAnnotations(t *testing.T, c *kubetest.Cluster, ids []string) map[string]map[string]string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := map[string]map[string]string{}
		b, err := os.ReadFile(c.AuditLog)
		if err != nil {
			t.Fatal(err)
		}
		for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); {
			var ev auditEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Stage == "ResponseComplete" {
				out[ev.AuditID] = ev.Annotations
			}
		}
		missing := 0
		for _, id := range ids {
			if _, ok := out[id]; !ok {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tlsConfig(tl webhookTLS) *tls.Config {
	return &tls.Config{RootCAs: tl.pool.Pool, MinVersion: tls.VersionTLS12}
}

// yamlObject decodes one YAML document into a map.
func yamlObject(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	return m
}
