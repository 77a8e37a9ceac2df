// Package kube is the Kubernetes API client of the agentless fleet check:
// credentials from a kubeconfig or the in-cluster service account (Load),
// and the one call the check makes, listing a namespace's pods a page at a
// time (Client.ListPods), over a caller's *http.Client (the shared
// transport, with its timeouts, backoff and retry budget). It is a few
// hundred lines rather than client-go, whose weight the binary does not
// carry for one GET (docs/fleet.md has the measurement).
package kube
