// Package kubernetes holds lockstep's Kubernetes deployment of the
// admission webhook (the YAML files in this directory) and the tests that
// keep them honest: one decodes each file strictly into the Kubernetes API
// types and checks the properties the webhook's safety depends on; the
// end-to-end tests (e2e_*_test.go) register the shipped webhook
// configuration in a real kube-apiserver (internal/testkit/kubetest, one per
// package run) and hold the webhook and `fleet check --targets k8s:` to
// what the API server sends and keeps.
package kubernetes
