// Package helm holds lockstep's Helm chart (deploy/helm/lockstep) and the
// tests that keep it honest: helm lint and helm template against the chart,
// its values schema refusing what it must, each rendering decoded strictly
// into the Kubernetes API types, and the rendering with
// testdata/kustomize-values.yaml compared, object by object, with the
// kustomize manifests of deploy/kubernetes, so that the two cannot drift.
package helm
