package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestAttackNames sends the webhook, run by the CLI with a registry alias,
// images that spell a governed registry another way, and requests whose
// kind, object and subresource disagree. Every one must be denied, also
// with --unmanaged allow, where an escape from governance would be
// admitted.
func TestAttackNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, pool := webhookTestCert(t, dir)
	addr := loopbackAddr(t)
	web := "registry.lockstep.test/store/web"
	_, raw, err := scenario.Manifest("store-web", 5, []manifest.Image{
		{Name: "web", Ref: web + ":v1", Repository: web, Tag: "v1", Digest: atkIndex, MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: atkAmd64, Config: atkAmd64Conf}}},
		{Name: "local", Ref: "127.0.0.1:5000/store/local:v1", Repository: "127.0.0.1:5000/store/local", Tag: "v1", Digest: atkSingle, MediaType: "application/vnd.oci.image.manifest.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: atkSingle, Config: atkSingleCfg}}},
	}, []string{"https://cdn.invalid/static/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	man := filepath.Join(dir, "release.json")
	os.WriteFile(man, raw, 0o644)
	client := serveWebhook(t, addr, pool, "--tls-cert", cert, "--tls-key", key, "--manifest", man, "--release", "store-web",
		"--insecure-allow-unsigned", "--unmanaged", "allow", "--registry-alias", "registry-lockstep.internal=registry.lockstep.test",
		"--registry-alias", "10.9.8.7:443=registry.lockstep.test")

	other := "sha256:" + strings.Repeat("ee", 32)
	pod := func(images ...string) string {
		var cs []string
		for i, im := range images {
			cs = append(cs, fmt.Sprintf(`{"name":"c%d","image":%q}`, i, im))
		}
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"store"},"spec":{"containers":[` + strings.Join(cs, ",") + `]}}`
	}
	podKind := `{"group":"","version":"v1","kind":"Pod"}`
	type review struct {
		name, kind, subresource, object string
		// want is the phrase of the denial: the finding it stands for.
		want string
	}
	notPinned, mismatch, notJudged := "is not pinned by digest", "is not one of release", "lockstep does not judge"
	cases := []review{
		{"class 5/host in upper case, a moved tag", podKind, "", pod("REGISTRY.lockstep.test/store/web:v1"), notPinned},
		{"class 5/host in mixed case, a foreign digest", podKind, "", pod("Registry.Lockstep.Test/store/web@" + other), mismatch},
		{"class 5/a trailing dot", podKind, "", pod("registry.lockstep.test./store/web:v1"), notPinned},
		{"class 5/a trailing dot and a digest", podKind, "", pod("registry.lockstep.test./store/web@" + other), mismatch},
		{"class 5/the default port 443", podKind, "", pod("registry.lockstep.test:443/store/web:latest"), notPinned},
		{"class 5/the default port 80", podKind, "", pod("registry.lockstep.test:80/store/web@" + other), mismatch},
		{"class 5/case, dot and port at once", podKind, "", pod("REGISTRY.LOCKSTEP.TEST.:443/store/web:v1"), notPinned},
		{"class 5/localhost for 127.0.0.1", podKind, "", pod("localhost:5000/store/local:v1"), notPinned},
		{"class 5/LOCALHOST for 127.0.0.1", podKind, "", pod("LOCALHOST:5000/store/local@" + other), mismatch},
		{"class 5/IPv6 loopback for 127.0.0.1", podKind, "", pod("[::1]:5000/store/local:v1"), notPinned},
		{"class 5/IPv4-mapped IPv6 for 127.0.0.1", podKind, "", pod("[::ffff:127.0.0.1]:5000/store/local:v1"), notPinned},
		{"class 5/another loopback address", podKind, "", pod("127.0.0.2:5000/store/local@" + other), mismatch},
		{"class 5/a declared alias", podKind, "", pod("registry-lockstep.internal/store/web:v1"), notPinned},
		{"class 5/a declared alias in upper case with a dot", podKind, "", pod("REGISTRY-LOCKSTEP.INTERNAL./store/web@" + other), mismatch},
		{"class 5/a declared IP alias on its default port", podKind, "", pod("10.9.8.7/store/web:v1"), notPinned},
		{"class 5/a declared IP alias as IPv4-mapped IPv6", podKind, "", pod("[::ffff:10.9.8.7]:443/store/web@" + other), mismatch},
		{"class 5/a governed image hidden behind an allowed one", podKind, "", pod("docker.io/library/busybox:1", "Registry.lockstep.test/store/web:v1"), notPinned},
		{"class 5/request kind Deployment, object a Pod", `{"group":"apps","version":"v1","kind":"Deployment"}`, "",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"` + web + `:v1"}]}}}}`, ""},
		{"class 5/request kind Pod, object a Deployment", podKind, "",
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"containers":[{"name":"c","image":"` + web + `@` + atkIndex.String() + `"}]}}`, "but the object is"},
		{"class 5/request kind Pod, object of another version", podKind, "", strings.Replace(pod(web+"@"+atkIndex.String()), `"apiVersion":"v1"`, `"apiVersion":"v2"`, 1), "but the object is"},
		{"class 5/a subresource in another case", podKind, "Status", pod(web + ":v1"), notJudged},
		{"class 5/ephemeralContainers spelled in camel case", podKind, "ephemeralContainers", pod(web + ":v1"), notJudged},
		{"class 5/a subresource with a trailing slash", podKind, "status/", pod(web + ":v1"), notJudged},
		{"class 5/an unknown subresource", podKind, "exec-images", pod(web + ":v1"), notJudged},
		{"class 5/a pod without containers", podKind, "", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i","image":"docker.io/library/busybox:1"}]}}`, "no containers"},
		{"class 5/a pod with an empty containers list", podKind, "", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}`, "no containers"},
	}
	for i, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			allowed, msg := postReview(t, client, addr, fmt.Sprintf("u%d", i), tt.kind, tt.subresource, tt.object)
			if allowed || !strings.Contains(msg, tt.want) {
				t.Errorf("allowed %v, message %q; want a denial saying %q", allowed, msg, tt.want)
			}
		})
	}
	// The control: the governed image, pinned, under any spelling, is
	// admitted; so is an unmanaged one (--unmanaged allow).
	for _, im := range []string{web + "@" + atkIndex.String(), "Registry.Lockstep.Test.:443/store/web@" + atkAmd64.String(), "[::1]:5000/store/local@" + atkSingle.String(), "docker.io/library/busybox:1"} {
		if allowed, msg := postReview(t, client, addr, "ok", podKind, "", pod(im)); !allowed {
			t.Errorf("control %s: denied: %s", im, msg)
		}
	}

	// A bad alias is exit 2 before anything is served.
	for _, a := range []string{"registry.lockstep.test", "a.test=a.test", "=b.test", "a.test=[::1"} {
		if code, _, errs := run(t, "webhook", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--manifest", man, "--release", "store-web",
			"--insecure-allow-unsigned", "--registry-alias", a); code != 2 || !strings.Contains(errs, "registry alias") {
			t.Errorf("class 5/--registry-alias %q: exit %d, %s; want 2", a, code, errs)
		}
	}
}

// loopbackAddr returns a loopback address whose socket is bound now, for
// the life of the test, and handed over to the webhook runWebhookCLI
// starts on it (invocation.listeners): no port is closed and bound again
// later, where another test's server could take it in between.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	handedOver.Store(addr, ln)
	t.Cleanup(func() { handedOver.Delete(addr); ln.Close() })
	return addr
}

// handedOver holds loopbackAddr's sockets, by address.
var handedOver sync.Map

// postReview sends one AdmissionReview of a CREATE and returns whether it
// was allowed, and the denial's message.
func postReview(t *testing.T, client *http.Client, addr, uid, kind, subresource, object string) (bool, string) {
	t.Helper()
	return postReviewIn(t, client, addr, uid, kind, subresource, "store", object)
}

// postReviewIn is postReview in namespace.
func postReviewIn(t *testing.T, client *http.Client, addr, uid, kind, subresource, namespace, object string) (bool, string) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":%q,"kind":%s,"resource":{"group":"","version":"v1","resource":"pods"},"subResource":%q,"namespace":%q,"operation":"CREATE","userInfo":{},"object":%s}}`,
		uid, kind, subresource, namespace, object)
	resp, err := client.Post("https://"+addr+"/validate", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rv struct {
		Response struct {
			Allowed bool `json:"allowed"`
			Status  struct {
				Message string `json:"message"`
			} `json:"status"`
		} `json:"response"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rv); err != nil {
		t.Fatalf("HTTP %d: %v", resp.StatusCode, err)
	}
	return rv.Response.Allowed, rv.Response.Status.Message
}

// TestAttackWebhookWrongRelease runs the webhook on a manifest of another
// release than --release: it never loads it, is never ready, and denies
// every pod, governed or not.
func TestAttackWebhookWrongRelease(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, pool := webhookTestCert(t, dir)
	addr := loopbackAddr(t)
	api9 := atkManifest(t, "store-api", 9)
	raw, err := os.ReadFile(api9)
	if err != nil {
		t.Fatal(err)
	}
	// Served, so that the test sees each fetch of the follower's.
	var fetches atomic.Int64
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Write(raw)
	}))
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr string
	go func() {
		var code int
		code, stderr = runWebhookCLI(ctx, "webhook", "--listen", addr, "--tls-cert", cert, "--tls-key", key, "--manifest", src.URL+"/release.json", "--release", "store-web",
			"--insecure-allow-unsigned", "--unmanaged", "allow", "--refresh", "1s")
		done <- code
	}()
	client := webhookClient(pool)
	// Serving, but not ready: it has no manifest of store-web.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get("https://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Fatal("class 1/webhook: ready with a manifest of another release")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook does not serve: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Past a refresh, however slow the machine: the third fetch starts
	// only once the second (the first refresh) is done with.
	deadline = time.Now().Add(20 * time.Second)
	for fetches.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook fetched the manifest %d times in 20 s, want 3 (--refresh 1s)", fetches.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"127.0.0.1:5000/store/web@` + atkIndex.String() + `"}]}}`
	for _, image := range []string{pod, strings.Replace(pod, "127.0.0.1:5000/store/web", "docker.io/library/busybox", 1)} {
		if allowed, msg := postReview(t, client, addr, "w", `{"group":"","version":"v1","kind":"Pod"}`, "", image); allowed || !strings.Contains(msg, "no verified release manifest") {
			t.Errorf("class 1/webhook: a manifest of another release: allowed %v, %q; want a denial (not judged)", allowed, msg)
		}
	}
	cancel()
	<-done
	if !strings.Contains(stderr, "manifest-wrong-release") {
		t.Errorf("the webhook's log does not say manifest-wrong-release:\n%s", stderr)
	}
}

// webhookClient is an HTTPS client trusting pool (webhookTestCert's).
func webhookClient(pool *x509.CertPool) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}
