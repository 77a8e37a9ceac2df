package kube_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/kubefake"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verify/fleet/kube"
)

// TestKubeconfigOverTLS: a kubeconfig with CA data, a client certificate
// by relative path and a token file reaches an HTTPS API server that
// demands the client certificate.
func TestKubeconfigOverTLS(t *testing.T) {
	pki := tlstest.NewPKI(t)
	api := &kubefake.API{Pods: []corev1.Pod{kubefake.Pod("store", "web-1", nil, "web:v1", "sha256:"+strings.Repeat("a", 64))}}
	server, err := tls.LoadX509KeyPair(pki.ServerCert, pki.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(api)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.Roots}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	ca, err := os.ReadFile(pki.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(kubefake.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certRel, err := filepath.Rel(dir, pki.ClientCert)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config")
	writeFile(t, path, fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: prod
contexts:
- {name: other, context: {cluster: none, user: none}}
- {name: prod, context: {cluster: c, user: u, namespace: store}}
clusters:
- {name: c, cluster: {server: %q, certificate-authority-data: %s}}
users:
- {name: u, user: {tokenFile: token, client-certificate: %q, client-key: %q}}
`, srv.URL+"/", base64.StdEncoding.EncodeToString(ca), certRel, pki.ClientKey))
	cfg, err := kube.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace != "store" || cfg.Server != srv.URL || cfg.TokenFile != filepath.Join(dir, "token") {
		t.Errorf("config = %+v", cfg)
	}
	c := &kube.Client{Config: cfg, HTTP: transport.New(transport.DefaultPolicy(), transport.WithTLSConfig(cfg.TLS)).HTTPClient()}
	list, err := c.ListPods(context.Background(), "store", "", 10, "")
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "web-1" {
		t.Fatalf("ListPods = %v, %v; want web-1", list, err)
	}
}

func TestKubeconfigErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"no such context": "current-context: x\ncontexts: []\n",
		"no server":       "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {}}]\n",
		"exec":            "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {exec: {command: aws}}}]\n",
		"bad CA":          "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', certificate-authority-data: bm90IGEgY2VydA==}}]\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		writeFile(t, path, body)
		if _, err := kube.Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Load = %v, want an error naming the file", name, err)
		}
	}
}

func TestInCluster(t *testing.T) {
	pki := tlstest.NewPKI(t)
	dir := t.TempDir()
	ca, err := os.ReadFile(pki.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ca.crt"), string(ca))
	writeFile(t, filepath.Join(dir, "namespace"), "store\n")
	cfg, err := kube.InCluster(dir, "10.96.0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server != "https://10.96.0.1:443" || cfg.Namespace != "store" || cfg.TokenFile != filepath.Join(dir, "token") || cfg.TLS.RootCAs == nil {
		t.Errorf("InCluster = %+v", cfg)
	}
	if _, err := kube.InCluster(t.TempDir(), "10.96.0.1", "443"); err == nil {
		t.Error("InCluster without ca.crt succeeded")
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
