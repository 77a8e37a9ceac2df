// Package agentapi is the wire contract of lockstep's agent: the identity
// of its status document, the states it reports and the parts of the
// status that the fleet check reads (the instance's identity, the digest
// it runs, the manifest it checked against, the assets it serves).
//
// It imports only package manifest, so that both sides of the wire, the
// agent (admission/agent, which serves the status) and the fleet check
// (verify/fleet, which reads it), depend on it and not on each other. The
// JSON shapes are stable and documented in docs/fleet.md; fields are only
// ever added.
package agentapi
