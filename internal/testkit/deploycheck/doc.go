// Package deploycheck holds the checks every deployment of lockstep's
// admission webhook must pass, whatever wrote it: the kustomize files of
// deploy/kubernetes and each rendering of the Helm chart in deploy/helm are
// held to the same rules (the kinds the webhook configuration sends, the
// Service it reaches, no object selector, a command line of lockstep
// webhook's own flags). Imported by tests only.
package deploycheck
