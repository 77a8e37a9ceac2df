package kubernetes

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/kubetest"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestWebhookFailsClosedEndToEnd: the shipped failurePolicy Fail, through a
// real API server: a webhook that answered a moment ago and is now down,
// and a webhook whose certificate the configuration's caBundle does not
// trust, both refuse even a Pod at the release digest, and nothing is kept.
func TestWebhookFailsClosedEndToEnd(t *testing.T) {
	c := kubetest.Shared(t)
	r := newRelease(t)
	tl := newWebhookTLS(t)
	down, stop := startWebhook(t, tl, "--manifest", r.Manifest, "--release", "store-web", "--key", r.Key)
	c.Namespace(t, "shop-down", map[string]string{optInLabel: "down"})
	register(t, c, shippedWebhookConfiguration(t, "lockstep-down", down, tl.caBundle, "down"))
	pinned := r.Repo + "@" + r.Digest()
	// Live first: it refuses a tag and admits the digest.
	waitFor(t, c, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/shop-down/pods?dryRun=All", Body: pod("probe", r.Repo+":v1", nil)},
		func(r *kubetest.Response) bool { return r.Code == http.StatusForbidden })
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/shop-down/pods?dryRun=All", Body: pod("probe", pinned, nil)})
	stop()

	other := newWebhookTLS(t) // a CA the configuration does not name
	untrusted, _ := startWebhook(t, other, "--manifest", r.Manifest, "--release", "store-web", "--key", r.Key)
	c.Namespace(t, "shop-badca", map[string]string{optInLabel: "badca"})
	register(t, c, shippedWebhookConfiguration(t, "lockstep-badca", untrusted, tl.caBundle, "badca"))

	for _, tc := range []struct{ name, namespace, msg string }{
		{"the webhook down", "shop-down", `^Internal error occurred: failed calling webhook "images.lockstep.dev": .*connection refused`},
		{"a webhook certificate the caBundle does not trust", "shop-badca", `^Internal error occurred: failed calling webhook "images.lockstep.dev": .*x509: certificate signed by unknown authority`},
	} {
		// Dry runs until the API server calls the new configuration (a dry
		// run admitted before that keeps nothing), then one real create.
		path := "/api/v1/namespaces/" + tc.namespace + "/pods"
		dry := waitFor(t, c, kubetest.Request{Method: "POST", Path: path + "?dryRun=All", Body: pod("pinned", pinned, nil)},
			func(r *kubetest.Response) bool { return r.Code != http.StatusCreated })
		created := c.Do(t, kubetest.Request{Method: "POST", Path: path, Body: pod("pinned", pinned, nil)})
		for what, resp := range map[string]*kubetest.Response{"a dry run": dry, "a create": created} {
			if resp.Code != http.StatusInternalServerError || !regexp.MustCompile(tc.msg).MatchString(resp.Message()) {
				t.Errorf("%s: %s: HTTP %d %q, want 500 /%s/", tc.name, what, resp.Code, resp.Message(), tc.msg)
			}
		}
		if got := c.Do(t, kubetest.Request{Method: "GET", Path: "/api/v1/namespaces/" + tc.namespace + "/pods/pinned"}); got.Code != http.StatusNotFound {
			t.Errorf("%s: the pod was kept: HTTP %d", tc.name, got.Code)
		}
	}
}

// TestWebhookTimeoutEndToEnd: a webhook that takes the connection and
// never answers (overloaded, or stopped in a debugger) is refused by the
// shipped failurePolicy Fail once timeoutSeconds pass: the API server does
// not wait for ever, nor admit the pod. The shipped configuration but for
// timeoutSeconds, 1 rather than 5 (TestWebhookConfiguration holds the
// shipped value), so that the suite waits 2 s rather than 10. The tests
// of this package do not run in parallel: urfave/cli's HelpFlag is one
// global that every App writes as it parses, a data race when two
// `lockstep` commands start at once in one process.
func TestWebhookTimeoutEndToEnd(t *testing.T) {
	c := kubetest.Shared(t)
	r := newRelease(t)
	tl := newWebhookTLS(t)
	cert, err := tls.LoadX509KeyPair(tl.cert, tl.key)
	if err != nil {
		t.Fatal(err)
	}
	hung := make(chan struct{})
	srv := tlstest.Server(t, cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-hung:
		}
	}))
	defer close(hung) // before the server's Close waits for the handlers
	c.Namespace(t, "shop-hang", map[string]string{optInLabel: "hang"})
	vwc := shippedWebhookConfiguration(t, "lockstep-hang", strings.TrimPrefix(srv.URL, "https://"), tl.caBundle, "hang")
	timeout := int32(1)
	vwc.Webhooks[0].TimeoutSeconds = &timeout
	register(t, c, vwc)
	pinned := r.Repo + "@" + r.Digest()
	path := "/api/v1/namespaces/shop-hang/pods"
	waitFor(t, c, kubetest.Request{Method: "POST", Path: path + "?dryRun=All", Body: pod("probe", pinned, nil)},
		func(r *kubetest.Response) bool { return r.Code != http.StatusCreated })
	start := time.Now()
	resp := c.Do(t, kubetest.Request{Method: "POST", Path: path, Body: pod("pinned", pinned, nil)})
	took := time.Since(start)
	const msg = `^Internal error occurred: failed calling webhook "images.lockstep.dev": .*(context deadline exceeded|Client.Timeout|timeout)`
	if resp.Code != http.StatusInternalServerError || !regexp.MustCompile(msg).MatchString(resp.Message()) {
		t.Errorf("a hung webhook: HTTP %d %q after %s, want 500 /%s/", resp.Code, resp.Message(), took, msg)
	}
	if got := c.Do(t, kubetest.Request{Method: "GET", Path: path + "/pinned"}); got.Code != http.StatusNotFound {
		t.Errorf("a hung webhook: the pod was kept: HTTP %d", got.Code)
	}
}

// TestWebhookRoutesEndToEnd: one `lockstep webhook --routes` governs two
// releases of one repository in two namespaces, through a real API server:
// each release's digest is kept in its namespace and refused in the
// other's, and a namespace that opted in but that no route names is
// refused everything.
func TestWebhookRoutesEndToEnd(t *testing.T) {
	c := kubetest.Shared(t)
	r := newRelease(t)
	payments := r.WriteManifestFunc(t, func(m *manifest.Manifest) {
		m.Release.Name = "payments"
		m.Images = []manifest.Image{sigtest.Pin(t, "web", r.OtherRef)}
	})
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	for _, m := range []string{r.Manifest, payments} {
		if code, out, errOut := lockstep(context.Background(), "publish", "--store", store, m); code != 0 {
			t.Fatalf("publish %s: exit %d\n%s%s", m, code, out, errOut)
		}
	}
	routes := filepath.Join(dir, "routes.yaml")
	if err := os.WriteFile(routes, []byte(`apiVersion: lockstep.dev/v1
kind: WebhookRoutes
routes:
  - release: store-web
    namespaces: [routes-web]
  - release: payments
    namespaces: [routes-pay]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := newWebhookTLS(t)
	addr, _ := startWebhook(t, tl, "--store", store, "--routes", routes, "--key", r.Key)
	for _, ns := range []string{"routes-web", "routes-pay", "routes-none"} {
		c.Namespace(t, ns, map[string]string{optInLabel: "routes"})
	}
	register(t, c, shippedWebhookConfiguration(t, "lockstep-routes", addr, tl.caBundle, "routes"))
	web, pay := r.Repo+"@"+r.Digest(), r.Repo+"@"+r.Other
	waitFor(t, c, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/routes-web/pods?dryRun=All", Body: pod("probe", pay, nil)},
		func(r *kubetest.Response) bool { return r.Code == http.StatusForbidden })
	for i, tc := range []struct {
		namespace, image string
		code             int
		msg              string
	}{
		{"routes-web", web, 201, ""},
		{"routes-pay", pay, 201, ""},
		{"routes-web", pay, 403, `lockstep denied Pod routes-web/p2: not release store-web@3: .*is not one of release store-web@3's digests`},
		{"routes-pay", web, 403, `lockstep denied Pod routes-pay/p3: not release payments@3: .*is not one of release payments@3's digests`},
		{"routes-none", web, 403, `lockstep denied Pod routes-none/p4: no route applies to namespace routes-none`},
	} {
		path, name := "/api/v1/namespaces/"+tc.namespace+"/pods", fmt.Sprintf("p%d", i)
		resp := c.Do(t, kubetest.Request{Method: "POST", Path: path, Body: pod(name, tc.image, nil)})
		if resp.Code != tc.code || (tc.msg != "" && !regexp.MustCompile(tc.msg).MatchString(resp.Message())) {
			t.Errorf("%s in %s: HTTP %d %q, want %d /%s/", tc.image, tc.namespace, resp.Code, resp.Message(), tc.code, tc.msg)
		}
		want := http.StatusNotFound
		if tc.code == 201 {
			want = http.StatusOK
		}
		if got := c.Do(t, kubetest.Request{Method: "GET", Path: path + "/" + name}); got.Code != want {
			t.Errorf("%s in %s: GET: HTTP %d, want %d", tc.image, tc.namespace, got.Code, want)
		}
	}
}
