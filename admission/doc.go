// Package admission is lockstep's boot gate: it observes an instance (the
// digest actually running, the asset IDs actually served), decides whether
// it runs the release its manifest describes, and acts on the decision
// (completing an Auto Scaling lifecycle action, registering with a target
// group, answering a Kubernetes admission review).
//
// The decision is a value, [Decision], that callers render. Admission fails
// closed: any error, timeout or panic on the way to a decision is a refusal.
//
// [Check] is the front door: it fetches and verifies the manifest (a
// manifest.Source and manifest.Verifier, and a [GenerationGuard], the
// trusted state of package manifest/trusted, which refuses rollbacks and
// records what was admitted), asks a running.Source what runs, probes the
// instance's pages (package probe), and checks the served assets against
// the manifest and the CDN (Config.CDN, verify/cdn through cdngate), all
// under one deadline. On the CDN it checks their closure: every asset they
// load, directly or not, by the manifest's asset graph (manifest.File.Loads),
// bounded by Config.MaxClosure; an asset a page references on the
// instance's own origin is checked on the instance too, where a browser
// fetches it. It holds
// no state of its own between calls (the guard does), so the fleet agent
// calls it on a timer. [Match] is the image rule on its own
// (manifest.Image.Identify's). The sub-packages: running (Docker, ECS, file and given
// digests), probe (HTML and JSON asset lists), gate (acting in AWS).
package admission
