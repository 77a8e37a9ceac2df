// Package agent is lockstep's agent: it runs on every instance, re-runs the
// admission check on an interval (with jitter, and at once when the store's
// channel moves to a new generation), and serves what it found:
//
//   - GET /v1/status: the instance's identity, the digest it runs, the
//     manifest it checks against, the fingerprint of the assets it serves
//     and the last decision, as a [Status] (JSON, stable; see docs/fleet.md);
//   - GET /healthz: 200 only while the last check admitted the instance, so
//     that a load balancer's health check becomes a second gate;
//   - GET /metrics: Prometheus metrics on the agent's own registry.
//
// The check itself is a [Checker]: the CLI wires admission's boot-gate check;
// tests use fakes. [Serve] binds to loopback unless a bearer token or TLS
// client certificates protect the status and metrics endpoints.
package agent
