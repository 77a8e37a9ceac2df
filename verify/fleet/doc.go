// Package fleet is lockstep's fleet consistency check: it finds a fleet's
// instances ([Discover]: Auto Scaling groups, ELBv2 target groups, EC2 tags,
// files of addresses, status URLs), fetches every instance agent's status
// concurrently ([Check]), groups the fleet by what it actually runs (release
// identity, served-asset fingerprint, manifest generation) and reports every
// instance that differs from the release manifest, and how. Fleets without
// an agent are read from their orchestrator instead (ecs:CLUSTER/SERVICE
// through ECS, k8s:NAMESPACE[/SELECTOR] through a [PodLister]): each
// container's running digest is compared by the gate's rule, and the report
// marks those instances agentless, as their served assets are not visible.
//
// The report renders as text, JSON (a stable, documented shape that
// `lockstep gc --in-use` reads), markdown (a GitHub job summary) and SARIF.
// AWS clients are small interfaces here; only the CLI builds real ones.
package fleet
