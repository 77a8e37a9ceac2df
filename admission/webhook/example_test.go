package webhook_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lockstep-dev/lockstep/admission/webhook"
	"github.com/lockstep-dev/lockstep/internal/imagename"
	"github.com/lockstep-dev/lockstep/manifest"
)

func Example() {
	// The release: one image, pinned by its index digest.
	index := manifest.MustParseDigest("sha256:" + strings.Repeat("1", 64))
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "store-web", Generation: 42, CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		Images: []manifest.Image{{
			Name: "web", Ref: "registry.example/store/web:v1", Repository: "registry.example/store/web", Tag: "v1",
			Digest: index, MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64",
				Digest: manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64)),
				Config: manifest.MustParseDigest("sha256:" + strings.Repeat("3", 64))}},
		}},
		Assets: manifest.Assets{CDN: []string{}, Files: []manifest.File{}, Fingerprint: manifest.Fingerprint(nil)},
	}
	raw, _ := m.Encode()
	signed, _ := manifest.NewSigned(raw, "example")
	release, _ := webhook.Accept(signed, false, time.Now())
	h := webhook.NewHandler(webhook.Fixed{A: release}, webhook.Options{})

	for _, image := range []string{"registry.example/store/web:v1@" + index.String(), "registry.example/store/web:v1"} {
		pod, _ := json.Marshal(corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "store"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
		})
		resp := h.Review(&admissionv1.AdmissionRequest{
			UID:       "b3c1e0a2",
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Namespace: "store", Name: "web",
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: pod},
		})
		if resp.Allowed {
			fmt.Println("allowed")
		} else {
			fmt.Println(resp.Result.Message[:strings.Index(resp.Result.Message, ";")])
		}
	}
	// Output:
	// allowed
	// lockstep denied Pod store/web: not release store-web@42: container "web" image "registry.example/store/web:v1": tag "v1" is not pinned by digest
}

// ExampleParseRoutes reads a routes file: one webhook, two releases.
func ExampleParseRoutes() {
	rs, err := webhook.ParseRoutes([]byte(`apiVersion: lockstep.dev/v1
kind: WebhookRoutes
routes:
  - release: store-web
    namespaces: [store, store-canary]
  - release: payments
    channel: canary
    namespaces: [payments]
    repositories: [registry.example.com/payments/api]
`), imagename.Names{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rs.Routes {
		fmt.Println(r.Release, r.Channel, r.Namespaces, r.Repositories)
	}
	// Output:
	// store-web  [store store-canary] []
	// payments canary [payments] [registry.example.com/payments/api]
}
