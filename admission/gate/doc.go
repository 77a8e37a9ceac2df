// Package gate runs the boot gate and acts on its decision in AWS:
// completing the instance's Auto Scaling lifecycle action (CONTINUE when
// admitted, ABANDON otherwise, with heartbeats while the check runs) and
// registering the instance with an ELBv2 target group only when admitted.
//
// The AWS clients sit behind one-method interfaces declared here; only the
// CLI builds the real ones (see [Config.Connect]). Like admission.Check,
// [Run] fails closed and returns a decision, never an error: a failure to
// act is a refusing finding, and an action that cannot be taken is
// recorded as failed in Decision.Actions.
package gate
