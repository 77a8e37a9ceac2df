// Package webhook is lockstep's Kubernetes validating admission webhook: the
// boot gate for pods. It answers admission.k8s.io/v1 AdmissionReviews at
// POST /validate, admitting a Pod (or the pod template of a Deployment,
// ReplicaSet, StatefulSet, DaemonSet, Job or CronJob) only when every image
// it would pull (containers, init containers, ephemeral containers and image
// volumes) is pinned by a digest of the release manifest it follows.
//
// The pieces are usable on their own: [Handler] judges reviews against the
// [Manifests] it is given; [Follower] keeps the last good, verified manifest
// of a [manifest.Source], refreshing it on an interval and refusing a lower
// generation; [CertReloader] serves a TLS certificate that it re-reads when
// its files change; [Serve] puts them together behind one HTTPS listener
// with /healthz, /readyz and /metrics.
//
// The webhook fails closed: until a first good manifest is loaded, with an
// expired manifest, or for a request it can decode but not judge, it denies.
// It decodes with encoding/json/v2's strict rules (a duplicate name
// anywhere, invalid UTF-8 or trailing data is refused; names match
// case-sensitively, as the API server matches them), and of the object
// only the fields that name an image.
package webhook
