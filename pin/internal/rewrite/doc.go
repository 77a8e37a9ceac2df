// Package rewrite rewrites image references in deployment files to their
// pinned form ("repo:tag@sha256:…"), in place, keeping everything else
// byte for byte: comments, key order, quoting, indentation.
//
// Each file is parsed with a real parser to find the references (yaml.v3's
// Node API for YAML, encoding/json's tokens for JSON, a Dockerfile
// tokenizer), and only the bytes of each reference are replaced. The
// formats:
//   - Kubernetes YAML, multi-document: containers, initContainers and
//     ephemeralContainers of a Pod, of every workload's pod template
//     (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
//     ReplicationController, PodTemplate, and any kind with
//     spec.template.spec) and of a CronJob's jobTemplate; a List's items;
//   - docker-compose YAML: services.*.image;
//   - ECS task definitions (JSON): containerDefinitions[].image, at the top
//     or under taskDefinition (the shape of describe-task-definition);
//   - Dockerfiles: the image of each FROM line, after --platform= and
//     other flags, before AS name.
//
// Left alone: FROM scratch, a FROM that names an earlier stage, references
// with a variable ($VAR, ${VAR}), YAML aliases and block scalars, YAML
// documents of other kinds inside a Kubernetes file, and every reference
// the Func declines.
//
// A file that does not parse, or is of no format above, is a *ParseError
// (an input error); Load reads every file before any is written, and Write
// writes each with internal/atomicfile, so no file is ever left half
// written.
package rewrite
