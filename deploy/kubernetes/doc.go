// Package kubernetes holds lockstep's Kubernetes deployment of the
// admission webhook (the YAML files in this directory) and the test that
// keeps them honest: it decodes each file strictly into the Kubernetes API
// types and checks the properties the webhook's safety depends on.
package kubernetes
