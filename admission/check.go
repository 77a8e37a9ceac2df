package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/admission/probe"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// DefaultTimeout bounds a whole check.
const DefaultTimeout = 60 * time.Second

// DefaultMaxClosure is the default of Config.MaxClosure: the most assets
// the closure adds to the references. At the transport's 16 connections
// per host and a 50 ms round trip, 2,000 HEADs take about 6 s per CDN
// base, a tenth of DefaultTimeout.
const DefaultMaxClosure = 2000

// DefaultMaxReferences is the default of Config.MaxReferences: the most
// assets the probed pages may reference, each checked on the CDN. At 16
// connections per host and a 50 ms round trip, 5,000 HEADs take about
// 16 s per CDN base, with the closure's bound about a third of
// DefaultTimeout.
const DefaultMaxReferences = 5000

// DefaultTLSWarning is how close to expiry a certificate is reported.
const DefaultTLSWarning = 14 * 24 * time.Hour

// Config is what a check needs. Source and Running are required; the rest
// has defaults.
type Config struct {
	// Source yields the manifest; Verifier checks its signature. With a
	// nil Verifier the manifest is refused (manifest-unsigned) unless
	// AllowUnsigned. AllowUnsigned (--insecure-allow-unsigned) makes every
	// decision say so, with Unsigned and a warning finding; a Verifier
	// given with it still refuses a wrong signature.
	Source        manifest.Source
	Verifier      manifest.Verifier
	AllowUnsigned bool
	// Guard, if set, refuses rolled-back generations and records the
	// accepted one (not in a dry run). When nil and Source is itself a
	// GenerationGuard (a *trusted.Source is, by the State it falls back
	// to), Source is the guard: the trusted state is given once.
	Guard GenerationGuard
	// ImageSignatures, when set (--require-image-signature), verifies the
	// cosign signatures of the manifest image the instance runs: from the
	// material embedded in the manifest when it embeds any for the image
	// (no registry request), else from the registry (Decision.ImageSignature
	// says which). RequireEmbeddedSignatures refuses instead of reading the
	// registry. A missing or wrong signature refuses (image-signature-invalid);
	// a registry that cannot be reached is dependency-unreachable.
	ImageSignatures           ImageVerifier
	RequireEmbeddedSignatures bool
	// Provenance, when set (--require-provenance), verifies the build
	// provenance of the manifest image the instance runs from the
	// attestations embedded in the manifest alone, against the manifest's
	// digests and release.source; the registry is never asked. Nothing
	// embedded for the image, or an attestation that fails a check,
	// refuses (provenance).
	Provenance ProvenanceVerifier

	// Image is the manifest image role the instance runs; empty means the
	// manifest's only image.
	Image string
	// Running reports the digest actually running.
	Running running.Source
	// Platform is os/arch[/variant]; empty means runtime.GOOS/GOARCH.
	Platform string

	// Probes are the instance's own pages; every asset they reference
	// must be in the manifest and on the CDN, and so must every asset
	// those load, directly or not, by the manifest's asset graph
	// (File.Loads): their closure. An asset a page references on the
	// instance's own origin is checked on the instance too (where a
	// browser fetches it), with what it loads.
	Probes []string
	// Sample more assets of the manifest, drawn at random, are checked on
	// the CDN besides the closure; AllAssets checks every one.
	Sample    int
	AllAssets bool
	// MaxClosure bounds the assets the closure adds to the references
	// (DefaultMaxClosure when zero): a closure that adds more is not
	// checked in part but refused as could-not-check (closure-too-large),
	// with the references still checked; raise it, or check every asset
	// with AllAssets, which it does not bound.
	MaxClosure int
	// MaxReferences bounds the assets the probed pages reference
	// (DefaultMaxReferences when zero), which MaxClosure does not count: a
	// page that names more is refused as could-not-check
	// (too-many-references) before any is checked, rather than running the
	// check into its deadline and calling that a dependency's failure.
	// AllAssets, which checks every asset, is not bounded by it.
	MaxReferences int
	// AllowHosts are third-party hosts a page may reference without
	// refusal (a fonts or analytics host): "host", "host:port" or
	// "*.domain". References to them are listed in Decision.Foreign,
	// unchecked. A reference to any other host that is neither a CDN base
	// nor the page's own origin refuses (asset-foreign-host): it cannot be
	// checked, and a build that loads code from a host nobody recorded is
	// what a mistake or an attacker would produce.
	AllowHosts []string
	// AssetFreePages declares that the probed pages reference no asset: a
	// page that references none is then accepted. Without it such a page
	// refuses (probe-no-assets): it proves nothing about what is served.
	AssetFreePages bool
	// Instance is the base URL under which the instance serves the files
	// the manifest says it serves (File.Served, apiVersion v3), each at its
	// path; empty means the root of the first probe's origin. Those files
	// are checked there, not on the CDN, with the same checks; with
	// neither a probe nor Instance they cannot be, and the check refuses
	// (dependency-unreachable).
	Instance string
	// CDN checks the assets on the CDN (lockstep's: verify/cdn/cdngate.Checker).
	// It is required: a check without it refuses (dependency-unreachable)
	// rather than skip the CDN.
	CDN CDNChecker

	// Client sends every request; nil means a client with the default
	// policy. Decision.Requests is the growth of its Stats during the
	// check: checks sharing a client at the same time count each other's
	// requests. (The Docker source dials its socket with a client of its
	// own, not counted.)
	Client *transport.Client
	// Timeout bounds the whole check (DefaultTimeout when zero): nothing
	// outlives it, and reaching it is a refusal.
	Timeout time.Duration
	// Wait is how long the check waits for the runtime and the probes
	// when what they report is "not yet" (a container not created or not
	// started, a connection refused, a 502, 503 or 504), retrying with the
	// client's backoff: zero (and at most) until the deadline less a
	// sixth of Timeout (50 s of the default 60 s), kept for the rest of the
	// check; negative means one attempt. Each call to the runtime and each
	// fetch of a probe has a deadline of its own, a sixth of Timeout, so
	// that none runs into the whole check's. While it waits the check says
	// so on Logger at Info. Decision.Waited says how long it took.
	Wait time.Duration
	// TLSWarning is how close to expiry a certificate is reported
	// (DefaultTLSWarning when zero): every TLS endpoint Client touched
	// during the check (manifest URL, probes, CDN, registry) within it is
	// a tls-expiring warning; an expired certificate refuses (tls-expiring)
	// and one that did not verify refuses (tls-invalid).
	TLSWarning time.Duration
	// DryRun decides without changing state: the Guard is not advanced.
	DryRun bool

	// Logger receives progress; nil is silent.
	Logger *slog.Logger
	// Now and Rand replace the clock and the sampler's randomness (tests).
	Now  func() time.Time
	Rand *rand.Rand
}

// DefaultPlatform is the platform of a check that names none: this
// binary's, runtime.GOOS/runtime.GOARCH.
func DefaultPlatform() string { return runtime.GOOS + "/" + runtime.GOARCH }

func (c Config) withDefaults() Config {
	if g, ok := c.Source.(GenerationGuard); ok && c.Guard == nil {
		c.Guard = g
	}
	if c.Platform == "" {
		c.Platform = DefaultPlatform()
	}
	if c.Client == nil {
		c.Client = transport.New(transport.DefaultPolicy(), transport.WithDeniedAddresses(transport.LinkLocal...), transport.WithSameOriginRedirects())
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.TLSWarning <= 0 {
		c.TLSWarning = DefaultTLSWarning
	}
	if c.MaxClosure <= 0 {
		c.MaxClosure = DefaultMaxClosure
	}
	if c.MaxReferences <= 0 {
		c.MaxReferences = DefaultMaxReferences
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return c
}

// Check decides whether the instance runs the release: it fetches and
// verifies the manifest, observes the running digest, probes the served
// pages, and checks the served assets and their closure (and a sample of
// the rest) against the manifest and the CDN, and those served from the
// instance's own origin on the instance too.
//
// Check fails closed and never returns an error: every failure (a
// dependency down, the deadline reached, a recovered panic) is a refusing
// finding, and Decision.Unverified tells "could not check" from
// "checked and wrong". It keeps no state between calls and is safe to
// call concurrently.
func Check(ctx context.Context, cfg Config) Decision {
	cfg = cfg.withDefaults()
	start := cfg.Now()
	before := cfg.Client.Stats()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	ctx, waits := transport.WithWaits(ctx)
	c := &checker{cfg: cfg, d: Decision{At: start, Platform: cfg.Platform, Image: cfg.Image, DryRun: cfg.DryRun}, over: ctx.Err}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				cfg.Logger.Error("admission check panicked", "panic", r, "stack", string(debug.Stack()))
				c.add(Finding{Kind: KindInternalError, Subject: c.stepName(), Message: fmt.Sprintf("internal error while %s: %v", c.stepName(), r)})
			}
		}()
		c.run(ctx)
	}()
	// A check whose context ended is never an admission, even when its
	// steps finished: select picks at random between ready cases, and a
	// step that did not look at ctx must not turn a cancelled gate into a yes.
	select {
	case <-done:
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		c.ended(ctx, waits.Pending())
	}
	d := c.close()
	if d.Findings == nil {
		d.Findings = []Finding{}
	}
	d.Requests = cfg.Client.Stats().Requests - before.Requests
	d.Duration = cfg.Now().Sub(start)
	return d
}

// run is the pipeline of a check, one step after another, each a method
// in a file of its own: fetching the manifest, the running digest and the
// pages at once (here), verifying the manifest against its signature and
// the trusted state (manifest.go), comparing the running digest (image.go),
// verifying image signatures (signatures.go), mapping the served assets
// (served.go), checking their closure on the CDN and on the instance
// (cdn.go), the certificates of
// every endpoint touched (certificates.go), and recording the accepted
// generation (here). checker.go holds the decision they accumulate.
func (c *checker) run(ctx context.Context) {
	cfg := c.cfg
	// The manifest, the running digest and the pages are independent:
	// fetch them at once.
	var (
		wg     sync.WaitGroup
		signed *manifest.Signed
		mErr   error
		obs    *running.Observation
		oErr   error
		pages  = make([]*probe.Page, len(cfg.Probes))
		pErrs  = make([]error, len(cfg.Probes))
	)
	// A refusal that is final (the manifest refused or unavailable, the
	// running image another one, a page that answered naming an asset the
	// manifest lacks or a foreign host) ends the waits for the runtime and
	// the pages at once: waiting cannot turn it into a yes, and a healthy
	// instance's slow start is all the waits are for.
	waitCtx, stopWaiting := context.WithCancelCause(ctx)
	defer stopWaiting(nil)
	var (
		m      *manifest.Manifest
		mDone  = make(chan struct{})
		imaged bool
	)
	c.setStep("fetching the manifest, the running digest and the probes")
	wg.Add(2 + len(cfg.Probes))
	go func() {
		defer wg.Done()
		defer close(mDone)
		defer recoverInto(&mErr)
		if cfg.Source == nil {
			mErr = errors.New("no manifest source configured")
		} else {
			signed, mErr = cfg.Source.Fetch(ctx)
		}
		if m = c.manifest(ctx, signed, mErr); m == nil {
			stopWaiting(errFinal)
		}
	}()
	go func() {
		defer wg.Done()
		defer recoverInto(&oErr)
		if cfg.Running == nil {
			oErr = errors.New("no running-digest source configured")
			return
		}
		obs, oErr = waitFor(ctx, waitCtx, c, "the running image", runtimeNotYet, cfg.Running.Observe)
		if oErr != nil {
			return
		}
		// Compare as soon as both are known: another image is final.
		select {
		case <-mDone:
		case <-ctx.Done():
			return
		}
		if m != nil {
			c.image(m, obs, nil)
			imaged = true
			if !c.allowed() {
				stopWaiting(errFinal)
			}
		}
	}()
	for i, u := range cfg.Probes {
		go func() {
			defer wg.Done()
			defer recoverInto(&pErrs[i])
			pages[i], pErrs[i] = waitFor(ctx, waitCtx, c, "probe "+u, probeNotYet, func(ctx context.Context) (*probe.Page, error) {
				return probe.Fetch(ctx, u, probe.Options{Client: cfg.Client})
			})
			if pErrs[i] != nil {
				return
			}
			// A page is fetched once: what it names now is what is judged.
			select {
			case <-mDone:
			case <-ctx.Done():
				return
			}
			if m != nil && c.servesUnlisted(m, pages[i]) {
				stopWaiting(errFinal)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	if errors.Is(context.Cause(waitCtx), errFinal) {
		// Refused already: what was still being waited for (a page or a
		// container not up yet) is not judged, since waiting cannot turn
		// the refusal into a yes; everything that answered is, so that
		// the report shows all that is wrong.
		notWaited := func(subject string, err error) {
			c.add(Finding{Kind: KindNotWaitedFor, Severity: Warn, Subject: subject,
				Message: fmt.Sprintf("%s: not judged: not up yet (%v) when the check was already a refusal, so the gate stopped waiting", subject, err)})
		}
		kept, keptErrs := pages[:0:0], pErrs[:0:0]
		for i := range pages {
			if pages[i] == nil && probeNotYet(pErrs[i]) {
				notWaited("probe "+cfg.Probes[i], pErrs[i])
				continue
			}
			kept, keptErrs = append(kept, pages[i]), append(keptErrs, pErrs[i])
		}
		pages, pErrs = kept, keptErrs
		if obs == nil && runtimeNotYet(oErr) {
			notWaited("the running image", oErr)
			imaged = true
		}
	}

	if !imaged {
		c.setStep("comparing the running digest")
		c.image(m, obs, oErr)
	}

	if m != nil && cfg.ImageSignatures != nil {
		c.setStep("verifying image signatures")
		c.imageSignatures(ctx, m)
	}

	if m != nil && cfg.Provenance != nil {
		c.setStep("verifying build provenance")
		c.provenance(ctx, m)
	}

	c.setStep("mapping the served assets")
	served := c.served(m, pages, pErrs)

	var tlsFailed map[string]string
	if m != nil {
		c.setStep("checking assets on the CDN")
		tlsFailed = c.cdn(ctx, m, served)
	}

	// Every endpoint touched counts, also when the manifest could not be
	// fetched (its URL's certificate may be why).
	c.setStep("checking certificates")
	c.certificates(tlsFailed)

	if m == nil {
		return
	}
	if cfg.Guard != nil && !cfg.DryRun && c.allowed() && ctx.Err() == nil {
		c.setStep("recording the accepted generation")
		if err := cfg.Guard.Accept(ctx, signed); err != nil {
			if kind, ok := refusalKind(err); ok {
				// A higher generation was accepted meanwhile.
				c.add(refusalFinding(kind, m.ID(), err))
			} else {
				c.unreachable("trusted state", fmt.Errorf("recording generation %d of %s: %w", m.Release.Generation, m.Release.Name, err))
			}
		}
	}
	c.setStep("done")
}

// errFinal is why the waits stop early: the check is already a refusal.
var errFinal = errors.New("the check is already a refusal")

func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("internal error: %v", r)
	}
}
