// Package pin is the workflow of `lockstep pin`, the way go-containerregistry's
// pkg/crane sits over pkg/v1/remote: [Run] resolves image references by digest
// (with verify/registry, which does the registry work), optionally verifies
// each pinned image's cosign signatures (verify/imagesig), refuses tags that
// moved, rewrites the references in Kubernetes YAML, docker-compose, ECS
// task definitions and Dockerfiles to their pinned form, and returns a
// [Report], which renders itself ([Report.Write]: text or JSON).
//
// The command only parses flags ([ParseRequests] for its "[NAME=]REF"
// arguments), calls Run and renders the report.
package pin
