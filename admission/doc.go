// Package admission is lockstep's boot gate: it observes an instance (the
// digest actually running, the asset IDs actually served), decides whether
// it runs the release its manifest describes, and acts on the decision
// (completing an Auto Scaling lifecycle action, registering with a target
// group, answering a Kubernetes admission review).
//
// The decision is a value, [Decision], that callers render. Admission fails
// closed: any error, timeout or panic on the way to a decision is a refusal.
package admission
