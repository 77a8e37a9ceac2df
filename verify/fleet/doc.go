// Package fleet is lockstep's fleet consistency check: it finds a fleet's
// instances ([Discover]: Auto Scaling groups, ELBv2 target groups, EC2 tags,
// files of addresses, status URLs), fetches every instance agent's status
// concurrently ([Check]), groups the fleet by what it actually runs (running
// digest, served-asset fingerprint, manifest generation) and reports every
// instance that differs from the release manifest, and how.
//
// The report renders as text, JSON (a stable, documented shape that
// `lockstep gc --in-use` reads), markdown (a GitHub job summary) and SARIF.
// AWS clients are one-method interfaces here; only the CLI builds real ones.
package fleet
