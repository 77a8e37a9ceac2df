package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/lockstep-dev/lockstep/internal/imagename"
	"github.com/lockstep-dev/lockstep/manifest"
)

// podReview is an AdmissionReview of a Pod in namespace with one container
// per image.
func podReview(t *testing.T, namespace string, images ...string) []byte {
	t.Helper()
	var cs []string
	for i, im := range images {
		cs = append(cs, fmt.Sprintf(`{"name":"c%d","image":%q}`, i, im))
	}
	return []byte(fmt.Sprintf(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{
		"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},
		"resource":{"group":"","version":"v1","resource":"pods"},
		"namespace":%q,"name":"p","operation":"CREATE",
		"object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":%q},
		"spec":{"containers":[%s]}}}}`, namespace, namespace, strings.Join(cs, ",")))
}

func reviewOf(t *testing.T, h *Handler, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := post(t, h, body)
	var r admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Response == nil {
		t.Fatalf("no review in %s (%v)", rec.Body, err)
	}
	return r.Response
}

// paymentsManifest is a second release, governing other repositories.
func paymentsManifest(gen int64) *manifest.Manifest {
	m := testManifest(gen)
	m.Release.Name = "payments"
	m.Images = []manifest.Image{{
		Name: "api", Ref: "registry.lockstep.test/payments/api:v2", Repository: "registry.lockstep.test/payments/api", Tag: "v2",
		Digest: digest("b"), MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: digest("b"), Config: digest("c")}},
	}}
	return m
}

// TestRoutedHandler: one webhook, many releases. Each case is a pod in a
// namespace with some images, and what the routes make of it.
func TestRoutedHandler(t *testing.T) {
	const (
		web      = "registry.lockstep.test/store/web@sha256:" + "1111111111111111111111111111111111111111111111111111111111111111"
		webMoved = "registry.lockstep.test/store/web@sha256:" + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
		api      = "registry.lockstep.test/payments/api@sha256:" + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
		apiOther = "registry.lockstep.test/payments/api@sha256:" + "1111111111111111111111111111111111111111111111111111111111111111"
		worker   = "registry.lockstep.test/payments/worker@sha256:" + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
		foreign  = "quay.io/prometheus/node-exporter:v1.8.2"
	)
	store, payments := Fixed{accepted(t, testManifest(42))}, Fixed{accepted(t, paymentsManifest(7))}
	routes := []RoutedManifests{
		{Route: Route{Release: "store-web", Namespaces: []string{"store", "shared"}}, Manifests: store},
		// payments claims its worker's repository, which its manifest
		// does not pin yet: such an image is denied, never unmanaged.
		{Route: Route{Release: "payments", Namespaces: []string{"payments", "shared"},
			Repositories: []string{"registry.lockstep.test/payments/api", "REGISTRY.lockstep.test:443/payments/worker"}}, Manifests: payments},
	}
	for _, unmanaged := range []Unmanaged{DenyUnmanaged, AllowUnmanaged} {
		h, err := NewRoutedHandler(routes, Options{Unmanaged: unmanaged})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, namespace string
			images          []string
			allowed         bool
			allowedIfAllow  bool // with --unmanaged allow instead
			want            string
		}{
			{"store's image in store", "store", []string{web}, true, true, ""},
			{"payments' image in payments", "payments", []string{api}, true, true, ""},
			{"both releases in the shared namespace", "shared", []string{web, api}, true, true, ""},
			{"store's moved digest in store", "store", []string{webMoved}, false, false, "not release store-web@42"},
			{"payments' image with another release's digest", "payments", []string{apiOther}, false, false, "is not one of release payments@7's digests"},
			{"store's image in payments: not routed there", "payments", []string{web}, false, true, "governed by none of the releases routed to namespace payments (payments@7"},
			{"payments' image in store: not routed there", "store", []string{api}, false, true, "governed by none of the releases routed to namespace store (store-web@42"},
			{"a claimed repository the manifest does not pin", "payments", []string{worker}, false, false, "image-not-in-release"},
			{"a foreign image in store", "store", []string{web, foreign}, false, true, "repository quay.io/prometheus/node-exporter is governed by none"},
			{"a namespace no route applies to", "default", []string{web}, false, true, "no route applies to namespace default"},
			{"one bad image of two in shared", "shared", []string{web, apiOther}, false, false, "not releases store-web@42, payments@7"},
			{"an unpinned tag of a routed release", "store", []string{"registry.lockstep.test/store/web:v1.4.2"}, false, false, "is not pinned by digest"},
			{"an invalid reference", "store", []string{"UPPER/Case::x"}, false, false, "not a valid image reference"},
		} {
			t.Run(fmt.Sprintf("%s/%s", unmanaged, tc.name), func(t *testing.T) {
				r := reviewOf(t, h, podReview(t, tc.namespace, tc.images...))
				want := tc.allowed
				if unmanaged == AllowUnmanaged {
					want = tc.allowedIfAllow
				}
				if r.Allowed != want {
					t.Fatalf("allowed %v, want %v: %+v", r.Allowed, want, r.Result)
				}
				if want {
					return
				}
				msg := r.Result.Message
				if tc.want == "image-not-in-release" {
					if !strings.Contains(msg, "the routes give repository registry.lockstep.test/payments/worker to release payments@7, whose manifest pins no image of it") {
						t.Errorf("message %q does not say the routes claim the repository", msg)
					}
				} else if !strings.Contains(msg, tc.want) {
					t.Errorf("message %q does not say %q", msg, tc.want)
				}
			})
		}
	}
}

// TestRoutedHandlerWaitsForEveryRoute: a request is judged only when every
// route of its namespace has a manifest; a namespace whose routes are all
// loaded is judged meanwhile.
func TestRoutedHandlerWaitsForEveryRoute(t *testing.T) {
	web := "registry.lockstep.test/store/web@sha256:" + strings.Repeat("1", 64)
	h, err := NewRoutedHandler([]RoutedManifests{
		{Route: Route{Release: "store-web", Namespaces: []string{"store", "shared"}}, Manifests: Fixed{accepted(t, testManifest(42))}},
		{Route: Route{Release: "payments", Namespaces: []string{"shared"}}, Manifests: Fixed{}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := reviewOf(t, h, podReview(t, "store", web)); !r.Allowed {
		t.Errorf("store, whose only route is loaded: denied %+v", r.Result)
	}
	r := reviewOf(t, h, podReview(t, "shared", web))
	if r.Allowed || !strings.Contains(r.Result.Message, "no verified manifest of release payments is loaded yet") {
		t.Errorf("shared, with payments not loaded: allowed %v, %+v; want a denial naming payments", r.Allowed, r.Result)
	}
	if r.AuditAnnotations["decision"] != decisionError {
		t.Errorf("annotations %v, want decision error", r.AuditAnnotations)
	}
}

func TestParseRoutes(t *testing.T) {
	names, err := imagename.New([]string{"registry.internal=registry.lockstep.test"})
	if err != nil {
		t.Fatal(err)
	}
	const head = "apiVersion: lockstep.dev/v1\nkind: WebhookRoutes\n"
	good := head + `routes:
  - release: store-web
    namespaces: [store, store-canary]
  - release: payments
    channel: canary
    repositories: [registry.internal/payments/api]
`
	r, err := ParseRoutes([]byte(good), names)
	if err != nil {
		t.Fatalf("ParseRoutes: %v", err)
	}
	if len(r.Routes) != 2 || r.Routes[1].Channel != "canary" || len(r.Routes[0].Namespaces) != 2 {
		t.Errorf("routes %+v", r.Routes)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "", "routes: empty"},
		{"no routes", head + "routes: []\n", "no routes"},
		{"wrong kind", "apiVersion: lockstep.dev/v1\nkind: Routes\nroutes: [{release: a}]\n", "want lockstep.dev/v1, WebhookRoutes"},
		{"unknown field", head + "routes: [{release: a, namespace: x}]\n", "field namespace not found"},
		{"a second document", head + "routes: [{release: a}]\n---\n" + head, "more than one YAML document"},
		{"a bad release", head + "routes: [{release: A/B}]\n", "routes[0]: release"},
		{"a bad channel", head + "routes: [{release: a, channel: ../x}]\n", "routes[0]: channel"},
		{"a bad namespace", head + "routes: [{release: a}, {release: b, namespaces: [Store]}]\n", "routes[1]: namespace \"Store\""},
		{"a namespace twice", head + "routes: [{release: a, namespaces: [x, x]}]\n", "namespace \"x\" twice"},
		{"a bad repository", head + "routes: [{release: a, repositories: [\"a b/cd\"]}]\n", "repository \"a b/cd\""},
		{"one repository twice, in two spellings", head + "routes: [{release: a, repositories: [registry.internal/xy, registry.lockstep.test/xy]}]\n", "twice"},
		{"too large", head + "routes: [{release: a}]\n#" + strings.Repeat("x", MaxRoutesSize), "over"},
		{"an empty namespaces list", head + "routes: [{release: a, namespaces: [x]}, {release: b, namespaces: []}]\n", "routes[1]: namespaces: an empty list is not allowed"},
		{"a null namespaces list", head + "routes: [{release: a, namespaces: ~}]\n", "routes[0]: namespaces: an empty list"},
		{"an empty list by alias", head + "routes: [{release: a, namespaces: &e []}, {release: b, repositories: *e}]\n", "routes[0]: namespaces: an empty list"},
		{"an empty repositories list", head + "routes: [{release: a, namespaces: [x], repositories: []}]\n", "routes[0]: repositories: an empty list"},
		{"one repository in two routes", head + "routes: [{release: a, repositories: [registry.internal/pay]}, {release: b, namespaces: [x], repositories: [registry.lockstep.test/pay]}]\n", "routes[1]: overlaps routes[0]: both give repository registry.lockstep.test/pay in namespace x (to releases a and b)"},
		{"one release in two routes", head + "routes: [{release: a, namespaces: [x, y]}, {release: a, channel: canary, namespaces: [y]}]\n", "routes[1]: overlaps routes[0]: both give release a's repositories in namespace y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRoutes([]byte(tc.doc), names)
			var re *RoutesError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseRoutes = %v, want a *RoutesError saying %q", err, tc.want)
			}
		})
	}
}

// Two routes of different releases both govern one repository in one
// namespace once their manifests load (the web route's manifest pins
// the repository the payments route lists): the image is denied as
// routes-overlap, whichever route comes first, never judged by the
// first release's manifest.
func TestRoutesOverlapAtAdmission(t *testing.T) {
	const web = "registry.lockstep.test/store/web@sha256:" + "1111111111111111111111111111111111111111111111111111111111111111"
	store, payments := Fixed{accepted(t, testManifest(42))}, Fixed{accepted(t, paymentsManifest(7))}
	a := RoutedManifests{Route: Route{Release: "store-web", Namespaces: []string{"shared"}}, Manifests: store}
	b := RoutedManifests{Route: Route{Release: "payments", Repositories: []string{"registry.lockstep.test/store/web"}}, Manifests: payments}
	for _, order := range [][]RoutedManifests{{a, b}, {b, a}} {
		h, err := NewRoutedHandler(order, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := reviewOf(t, h, podReview(t, "shared", web))
		if r.Allowed || !strings.Contains(r.Result.Message, "both govern repository registry.lockstep.test/store/web in namespace shared") {
			t.Errorf("routes %s then %s: allowed %v, %+v; want a routes-overlap denial", order[0].Release, order[1].Release, r.Allowed, r.Result)
		}
	}
}
