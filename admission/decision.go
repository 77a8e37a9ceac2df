package admission

import (
	"time"

	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/manifest"
)

// Kind classifies a finding. The values are stable: they appear in JSON
// reports and in docs/boot-gate.md.
type Kind string

// The kinds of finding.
const (
	KindImageDigestMismatch  Kind = "image-digest-mismatch"
	KindImageNotPinned       Kind = "image-not-pinned"
	KindImageSignature       Kind = "image-signature-invalid"
	KindAssetNotInManifest   Kind = "asset-not-in-manifest"
	KindAssetMissingOnCDN    Kind = "asset-missing-on-cdn"
	KindAssetContentMismatch Kind = "asset-content-mismatch"
	KindAssetForeignHost     Kind = "asset-foreign-host"
	KindManifestInvalid      Kind = "manifest-invalid"
	KindManifestExpired      Kind = "manifest-expired"
	KindManifestRollback     Kind = "manifest-rollback"
	// KindManifestWrongRelease: a manifest of another release than the
	// one the consumer follows (--release).
	KindManifestWrongRelease  Kind = "manifest-wrong-release"
	KindManifestUnsigned      Kind = "manifest-unsigned"
	KindManifestSignature     Kind = "manifest-signature-invalid"
	KindDependencyUnreachable Kind = "dependency-unreachable"
	// KindReleaseNotFound: the store answered, and holds no such release or
	// channel (store.NotFoundError: the message lists what it holds). Could
	// not verify (exit 3), as in status, manifest get and fleet check.
	KindReleaseNotFound Kind = "release-not-found"
	KindCDNLoop         Kind = "cdn-loop"
	KindTLSExpiring     Kind = "tls-expiring"
	KindTLSInvalid      Kind = "tls-invalid"
	// KindProbeNoAssets: a probed page references no asset, and so proves
	// nothing (unless Config.AssetFreePages).
	KindProbeNoAssets Kind = "probe-no-assets"
	// KindProbeUnreadable: a probed page (or stylesheet) is in a
	// Content-Encoding or of a content type the probe cannot read, or a
	// JSON answer is in no asset-list shape the probe reads.
	KindProbeUnreadable Kind = "probe-unreadable"
	// KindRedirectOffOrigin: a request of the check was redirected to
	// another origin, which the gate never follows.
	KindRedirectOffOrigin Kind = "redirect-off-origin"
	// KindAddressDenied: a request of the check would have contacted a
	// link-local or metadata address (see transport.LinkLocal).
	KindAddressDenied Kind = "address-denied"
	// KindImageNotNamed: the instance's image cannot be chosen from the
	// manifest (Config.Image names none of its images, or the manifest has
	// several and Config.Image is empty). It is the operator's invocation
	// that is wrong, so the CLI exits 2 (see Decision.Misconfigured).
	KindImageNotNamed Kind = "image-not-named"
	// KindNotWaitedFor (a warning): a page or the running image was not up
	// yet when the check was already a refusal, so the gate stopped
	// waiting for it and did not judge it.
	KindNotWaitedFor Kind = "not-waited-for"
	// KindAssetMissingOnInstance: an asset a page references on the
	// instance's own origin (or one it loads) that the instance answers
	// 403, 404 or 410 for.
	KindAssetMissingOnInstance Kind = "asset-missing-on-instance"
	// KindClosureTooLarge: the assets the served ones load (their closure
	// by the manifest's asset graph) are more than Config.MaxClosure, so
	// the gate did not check them (it checked the references): could not
	// verify, not a mismatch.
	KindClosureTooLarge Kind = "closure-too-large"
	// KindTooManyReferences: the probed pages reference more assets than
	// Config.MaxReferences, so the gate checked none of them on the CDN
	// (checking them all would run the check into its deadline): could
	// not verify, by the gate's own bound, not a dependency's failure.
	KindTooManyReferences Kind = "too-many-references"
	// KindInternalError is a bug in lockstep (a recovered panic): the
	// instance is refused, as for any error.
	KindInternalError Kind = "internal-error"
	// KindProvenance: with Config.Provenance, the image the instance runs
	// has no embedded provenance attestation that verifies, names its
	// digest and is SLSA provenance of the release's source repository and
	// commit (the message names the check that failed).
	KindProvenance Kind = "provenance"
)

// unverifiable reports whether a refusing finding of kind k means "could
// not check" (exit 3) rather than "checked and wrong" (exit 1).
func (k Kind) unverifiable() bool {
	return k == KindDependencyUnreachable || k == KindReleaseNotFound || k == KindInternalError || k == KindClosureTooLarge || k == KindTooManyReferences
}

// Severity says whether a finding refuses admission.
type Severity string

// Severities.
const (
	// Refuse: the instance must not join.
	Refuse Severity = "refuse"
	// Warn: reported, not refused (e.g. a certificate expiring soon).
	Warn Severity = "warn"
)

// Finding is one reason a decision is what it is.
type Finding struct {
	Kind     Kind     `json:"kind"`
	Severity Severity `json:"severity"`
	// Subject names what the finding is about: an image role, an asset
	// path, an endpoint.
	Subject string `json:"subject,omitempty"`
	Got     string `json:"got,omitempty"`
	Want    string `json:"want,omitempty"`
	Message string `json:"message"`
}

// Decision is the outcome of an admission check.
type Decision struct {
	// Allowed is true only when every check passed.
	Allowed bool `json:"allowed"`
	// Unverified is true when the instance was refused because something
	// could not be checked (exit 3), as opposed to a mismatch (exit 1).
	Unverified bool      `json:"unverified,omitempty"`
	Findings   []Finding `json:"findings"`
	// DryRun is true when the decision was reported without acting.
	DryRun bool      `json:"dryRun,omitempty"`
	At     time.Time `json:"at"`

	// Release, Generation, ManifestDigest and ManifestLocation name the
	// manifest checked against, once it was fetched.
	Release          string          `json:"release,omitempty"`
	Generation       int64           `json:"generation,omitempty"`
	ManifestDigest   manifest.Digest `json:"manifestDigest,omitzero"`
	ManifestLocation string          `json:"manifestLocation,omitempty"`
	// ManifestCachedAt is set when the manifest is the trusted state's
	// cached copy, used because the store could not be reached (--max-age):
	// when that copy was last accepted from the store.
	ManifestCachedAt time.Time `json:"manifestCachedAt,omitzero"`
	// Unsigned is true when the manifest was accepted without a verified
	// signature (--insecure-allow-unsigned); every report says so.
	Unsigned bool `json:"unsigned,omitempty"`

	// Image is the manifest image role checked, Platform the gate's
	// platform (os/arch[/variant]).
	Image    string `json:"image,omitempty"`
	Platform string `json:"platform,omitempty"`
	// Running is what the runtime reported; RunningDigest the digest that
	// identifies it (the image ID, else the first repo digest); Match
	// which digest of the manifest it matched: "index", "manifest" or
	// "config".
	Running       *running.Observation `json:"running,omitempty"`
	RunningDigest manifest.Digest      `json:"runningDigest,omitzero"`
	Match         string               `json:"match,omitempty"`

	// ImageSignature says where the image's signatures were verified
	// from, when they are required: "embedded" (the manifest's material
	// alone, no registry request) or "registry" (the manifest embeds none
	// for the image).
	ImageSignature string `json:"imageSignature,omitempty"`

	// Served are the asset IDs the probed pages reference, sorted;
	// ServedFingerprint is manifest.Fingerprint over them (an ID the
	// manifest lacks counts with an all-zero hash), equal to the
	// manifest's assets.fingerprint when the probes reveal exactly the
	// manifest's files. Foreign are references to other hosts.
	Served            []string        `json:"served,omitempty"`
	ServedFingerprint manifest.Digest `json:"servedFingerprint,omitzero"`
	Foreign           []string        `json:"foreign,omitempty"`
	// CDNChecked counts the asset checks made at the CDN (per base).
	CDNChecked int `json:"cdnChecked,omitempty"`
	// Closure says how much of what the probed pages make a browser load
	// was checked, once there were probes and a manifest.
	Closure *Closure `json:"closure,omitempty"`
	// InstanceChecked counts the asset checks made on the instance itself:
	// the assets its pages reference on its own origin, and their closure.
	InstanceChecked int `json:"instanceChecked,omitempty"`

	// Actions are what was done about the decision (lifecycle action,
	// target registration), in order.
	Actions []Action `json:"actions,omitempty"`

	// Requests counts the HTTP requests the check sent; Duration is how
	// long it took; Waited how long of it the check waited for the runtime
	// or a probe that was not up yet (Config.Wait).
	Requests int64         `json:"requests"`
	Duration time.Duration `json:"durationNanos"`
	Waited   time.Duration `json:"waitedNanos,omitempty"`
}

// Closure is the closure of the served assets: the manifest's assets the
// probed pages reference, what every page of the release loads (its
// roots), and every asset of the manifest they load, directly or not, by
// its asset graph (File.Loads).
type Closure struct {
	// Graph is false when the manifest records no asset graph (no file
	// has Loads, as in every lockstep.dev/v1 manifest): the closure is then
	// the references alone.
	Graph bool `json:"graph"`
	// Referenced counts the served assets the manifest lists: the
	// probed pages' references.
	Referenced int `json:"referenced"`
	// Roots counts the release's roots (manifest.Assets.Roots: its pages
	// and RSC payloads) whose loads are checked too: what a route that is
	// not probed loads.
	Roots int `json:"roots,omitempty"`
	// Assets counts the closure, its roots included.
	Assets int `json:"assets"`
	// Checked counts the closure's assets checked on the CDN (each on
	// every base): fewer than Assets when the closure adds more than Max
	// (closure-too-large: the references alone were checked) or the CDN
	// check could not start.
	Checked int `json:"checked"`
	// Max bounds the assets the closure adds to the references
	// (Config.MaxClosure).
	Max int `json:"max"`
}

// Action is one thing done (or, in a dry run, not done) about a decision.
type Action struct {
	// Kind is "complete-lifecycle-action" or "register-targets".
	Kind string `json:"kind"`
	// Target names what was acted on: "ASG/HOOK", a target group ARN.
	Target string `json:"target"`
	// Instance is the EC2 instance ID acted for.
	Instance string `json:"instance,omitempty"`
	// Result is the lifecycle action result sent: CONTINUE or ABANDON.
	Result string `json:"result,omitempty"`
	// Status is "done", "already-done" (an idempotent retry), "skipped"
	// (dry run) or "failed".
	Status string `json:"status"`
	// Heartbeats counts lifecycle heartbeats sent while the check ran.
	Heartbeats int    `json:"heartbeats,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Action statuses.
const (
	ActionDone        = "done"
	ActionAlreadyDone = "already-done"
	ActionSkipped     = "skipped"
	ActionFailed      = "failed"
)

// Add records a finding and recomputes Allowed and Unverified: any
// refusing finding refuses; the refusal is unverified when every refusing
// finding is of a could-not-check kind.
func (d *Decision) Add(f Finding) {
	if f.Severity == "" {
		f.Severity = Refuse
	}
	d.Findings = append(d.Findings, f)
	d.settle()
}

// settle derives Allowed and Unverified from the findings.
func (d *Decision) settle() {
	refusals, unverifiable := 0, 0
	for _, f := range d.Findings {
		if f.Severity != Refuse {
			continue
		}
		refusals++
		if f.Kind.unverifiable() {
			unverifiable++
		}
	}
	d.Allowed = refusals == 0
	d.Unverified = refusals > 0 && refusals == unverifiable
}

// Misconfigured reports whether the refusal is the invocation's fault
// rather than the instance's: a finding of KindImageNotNamed. The instance
// is refused all the same.
func (d *Decision) Misconfigured() bool {
	for _, f := range d.Refusals() {
		if f.Kind == KindImageNotNamed {
			return true
		}
	}
	return false
}

// Refusals returns the findings that refuse admission.
func (d *Decision) Refusals() []Finding {
	var out []Finding
	for _, f := range d.Findings {
		if f.Severity == Refuse {
			out = append(out, f)
		}
	}
	return out
}

// Has reports whether the decision holds a finding of kind k.
func (d *Decision) Has(k Kind) bool {
	for _, f := range d.Findings {
		if f.Kind == k {
			return true
		}
	}
	return false
}
