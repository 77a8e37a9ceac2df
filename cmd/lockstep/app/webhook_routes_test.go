package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
)

// reviewIn posts an AdmissionReview of a Pod in namespace running image and
// returns whether it was allowed and the denial's message.
func reviewIn(t *testing.T, client *http.Client, addr, namespace, image string) (bool, string) {
	t.Helper()
	pod := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":%q},"spec":{"containers":[{"name":"c","image":%q}]}}`, namespace, image)
	return postReviewIn(t, client, addr, "r", `{"group":"","version":"v1","kind":"Pod"}`, "", namespace, pod)
}

// TestWebhookRoutes: one `lockstep webhook` governs two releases of one
// store, by namespace. Both releases build the same repository, so only
// the routes tell which digest belongs where: release web's image is
// admitted in namespace store and denied in payments, and the other way
// round; a namespace no route names follows --unmanaged.
func TestWebhookRoutes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, pool := webhookTestCert(t, dir)
	storeURL := filepath.Join(dir, "store")
	rel := map[string]*manifest.Signed{}
	for _, name := range []string{"web", "payments"} {
		m := storetest.Manifest(t, name, 3, "")
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, m.Raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := run(t, "publish", "--allow-unsigned", "--store", storeURL, p); code != 0 {
			t.Fatalf("publish %s: exit %d\n%s%s", name, code, out, errs)
		}
		rel[name] = m
	}
	routes := filepath.Join(dir, "routes.yaml")
	os.WriteFile(routes, []byte(`apiVersion: lockstep.dev/v1
kind: WebhookRoutes
routes:
  - release: web
    namespaces: [store]
  - release: payments
    channel: production
    namespaces: [payments]
`), 0o644)
	addr := loopbackAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		code, _ := runWebhookCLI(ctx, "webhook", "--listen", addr, "--tls-cert", cert, "--tls-key", key, "--store", storeURL,
			"--routes", routes, "--insecure-allow-unsigned", "--refresh", "1s")
		done <- code
	}()
	client := webhookClient(pool)
	waitReady(t, client, "https://"+addr+"/readyz", exitedOf(done))
	resp, err := client.Get("https://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	ready, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(ready) != "ok: release web@3, payments@3\n" {
		t.Errorf("/readyz says %q, want both releases", ready)
	}
	image := func(name string) string { return "registry.test/web@" + rel[name].Manifest.Images[0].Digest.String() }
	for _, tc := range []struct {
		namespace, release string
		allowed            bool
		want               string
	}{
		{"store", "web", true, ""},
		{"payments", "payments", true, ""},
		{"store", "payments", false, "is not one of release web@3's digests"},
		{"payments", "web", false, "is not one of release payments@3's digests"},
		{"default", "web", false, "no route applies to namespace default"},
	} {
		allowed, msg := reviewIn(t, client, addr, tc.namespace, image(tc.release))
		if allowed != tc.allowed || !strings.Contains(msg, tc.want) {
			t.Errorf("release %s's image in namespace %s: allowed %v, %q; want %v, %q", tc.release, tc.namespace, allowed, msg, tc.allowed, tc.want)
		}
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d after the context was cancelled, want 0", code)
	}
}

func TestWebhookRoutesUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, _ := webhookTestCert(t, dir)
	good := filepath.Join(dir, "routes.yaml")
	os.WriteFile(good, []byte("apiVersion: lockstep.dev/v1\nkind: WebhookRoutes\nroutes: [{release: web}]\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: lockstep.dev/v1\nkind: WebhookRoutes\nroutes: [{release: web, namespaces: [Not_A_Label]}]\n"), 0o644)
	base := []string{"webhook", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--insecure-allow-unsigned"}
	storeURL := filepath.Join(dir, "store")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"routes and --release", []string{"--store", storeURL, "--routes", good, "--release", "web"}, "--routes replaces --release and --manifest"},
		{"routes and --manifest", []string{"--routes", good, "--manifest", good}, "--routes replaces --release and --manifest"},
		{"routes without a store", []string{"--routes", good}, "--routes needs --store"},
		{"a missing routes file", []string{"--store", storeURL, "--routes", filepath.Join(dir, "nope.yaml")}, "no such file"},
		{"an invalid route", []string{"--store", storeURL, "--routes", bad}, `routes[0]: namespace "Not_A_Label"`},
		{"routes that are a directory", []string{"--store", storeURL, "--routes", dir}, "--routes"},
	} {
		code, errs := runWebhookCLI(context.Background(), append(base, tc.args...)...)
		if code != ExitInvalid || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", tc.name, code, errs, tc.want)
		}
	}
	if _, err := os.Stat(storeURL); !os.IsNotExist(err) {
		t.Errorf("a refused webhook created the store: %v", err)
	}
}
