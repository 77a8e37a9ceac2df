package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/admission/probe"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

// DefaultTimeout bounds a whole check.
const DefaultTimeout = 60 * time.Second

// DefaultTLSWarning is how close to expiry a certificate is reported.
const DefaultTLSWarning = 14 * 24 * time.Hour

// GenerationGuard is the consumer's trusted state: the highest generation
// of each release it has accepted. Check (the function) is the one place
// it is consulted: it calls the guard's Check once the manifest's
// signature verifies, and its Accept only when the decision admits and it
// is not a dry run. *trusted.State is the implementation.
type GenerationGuard interface {
	// Check refuses s with a *trusted.RefusalError (a rollback below an
	// accepted generation, an expired manifest), whose Kind becomes the
	// finding's kind; a bare *manifest.GenerationError is a rollback too.
	// Any other error means the state cannot be read (fail closed).
	Check(ctx context.Context, s *manifest.Signed) error
	// Accept records s as accepted for its release.
	Accept(ctx context.Context, s *manifest.Signed) error
}

var _ GenerationGuard = (*trusted.State)(nil)

// refusalKind maps a refusal of the trusted state (or of its source) to
// the finding kind it is, by type: a *trusted.RefusalError by its Kind, a
// *manifest.GenerationError as a rollback. ok is false for anything else.
func refusalKind(err error) (kind Kind, ok bool) {
	var re *trusted.RefusalError
	if errors.As(err, &re) {
		switch re.Kind {
		case trusted.KindRollback:
			return KindManifestRollback, true
		case trusted.KindExpired:
			return KindManifestExpired, true
		case trusted.KindWrongRelease:
			return KindManifestWrongRelease, true
		}
	}
	var wr *manifest.WrongReleaseError
	if errors.As(err, &wr) {
		return KindManifestWrongRelease, true
	}
	var ge *manifest.GenerationError
	if errors.As(err, &ge) {
		return KindManifestRollback, true
	}
	return "", false
}

// refusalFinding is the finding for a refusal of refusalKind.
func refusalFinding(kind Kind, subject string, err error) Finding {
	f := Finding{Kind: kind, Subject: subject, Message: err.Error()}
	var ge *manifest.GenerationError
	if errors.As(err, &ge) {
		f.Got, f.Want = fmt.Sprint(ge.Offered), fmt.Sprintf("at least %d", ge.Have)
	}
	var wr *manifest.WrongReleaseError
	if errors.As(err, &wr) {
		f.Got, f.Want = wr.Got, wr.Want
	}
	return f
}

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
	// accepted one (not in a dry run).
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

	// Image is the manifest image role the instance runs; empty means the
	// manifest's only image.
	Image string
	// Running reports the digest actually running.
	Running running.Source
	// Platform is os/arch[/variant]; empty means runtime.GOOS/GOARCH.
	Platform string

	// Probes are the instance's own pages; every asset they reference
	// must be in the manifest and on the CDN.
	Probes []string
	// Sample more assets of the manifest, drawn at random, are checked on
	// the CDN besides the served ones; AllAssets checks every one.
	Sample    int
	AllAssets bool
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
	// client's backoff: zero means until the deadline less a sixth of
	// Timeout (50 s of the default 60 s), kept for the rest of the check;
	// negative means one attempt. Decision.Waited says how long it took.
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
// pages, and checks the served assets (and a sample of the rest) against
// the manifest and the CDN.
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
	c := &checker{cfg: cfg, d: Decision{At: start, Platform: cfg.Platform, Image: cfg.Image, DryRun: cfg.DryRun}}
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
		why := "the deadline of " + cfg.Timeout.String() + " was reached"
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = "the check was cancelled"
		}
		c.add(Finding{Kind: KindDependencyUnreachable, Subject: c.stepName(), Message: why + " while " + c.stepName()})
	}
	d := c.close()
	if d.Findings == nil {
		d.Findings = []Finding{}
	}
	d.Requests = cfg.Client.Stats().Requests - before.Requests
	d.Duration = cfg.Now().Sub(start)
	return d
}

// checker accumulates one check's decision. Its methods are safe to call
// from the check's goroutines; after close, they do nothing.
type checker struct {
	cfg    Config
	mu     sync.Mutex
	d      Decision
	step   string
	closed bool
}

func (c *checker) add(f Finding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.d.Add(f)
	}
}

func (c *checker) update(fn func(d *Decision)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		fn(&c.d)
	}
}

func (c *checker) setStep(s string) {
	c.mu.Lock()
	c.step = s
	c.mu.Unlock()
	c.cfg.Logger.Debug("admission", "step", s)
}

func (c *checker) stepName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.step == "" {
		return "starting"
	}
	return c.step
}

func (c *checker) close() Decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.d.settle()
	d := c.d
	d.Findings = append([]Finding(nil), c.d.Findings...)
	return d
}

// unreachable records a dependency that failed. A request the gate
// refused to send or follow (a link-local address, a redirect to another
// origin) and a probe that can prove nothing are refusals of their own
// kinds, not "could not check".
func (c *checker) unreachable(subject string, err error) {
	c.add(Finding{Kind: requestKind(err), Subject: subject, Message: err.Error()})
}

// requestKind is the kind of a failed request's finding.
func requestKind(err error) Kind {
	var de *transport.DeniedAddressError
	var re *transport.RedirectError
	var pe *probe.RefusalError
	switch {
	case errors.As(err, &de):
		return KindAddressDenied
	case errors.As(err, &pe) && pe.Reason == probe.ReasonRedirect, errors.As(err, &re):
		return KindRedirectOffOrigin
	case errors.As(err, &pe):
		return KindProbeUnreadable
	}
	return KindDependencyUnreachable
}

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
	c.setStep("fetching the manifest, the running digest and the probes")
	wg.Add(2 + len(cfg.Probes))
	go func() {
		defer wg.Done()
		defer recoverInto(&mErr)
		if cfg.Source == nil {
			mErr = errors.New("no manifest source configured")
			return
		}
		signed, mErr = cfg.Source.Fetch(ctx)
	}()
	go func() {
		defer wg.Done()
		defer recoverInto(&oErr)
		if cfg.Running == nil {
			oErr = errors.New("no running-digest source configured")
			return
		}
		obs, oErr = waitFor(ctx, c, "the running image", runtimeNotYet, cfg.Running.Observe)
	}()
	for i, u := range cfg.Probes {
		go func() {
			defer wg.Done()
			defer recoverInto(&pErrs[i])
			pages[i], pErrs[i] = waitFor(ctx, c, "probe "+u, probeNotYet, func(ctx context.Context) (*probe.Page, error) {
				return probe.Fetch(ctx, u, probe.Options{Client: cfg.Client})
			})
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}

	c.setStep("verifying the manifest")
	m := c.manifest(ctx, signed, mErr)

	c.setStep("comparing the running digest")
	c.image(m, obs, oErr)

	if m != nil && cfg.ImageSignatures != nil {
		c.setStep("verifying image signatures")
		c.imageSignatures(ctx, m)
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

func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("internal error: %v", r)
	}
}

func (c *checker) allowed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d.settle()
	return c.d.Allowed
}

// manifest checks the fetched manifest and returns it, or nil when it
// cannot be trusted.
func (c *checker) manifest(ctx context.Context, s *manifest.Signed, err error) *manifest.Manifest {
	cfg := c.cfg
	var ve *manifest.ValidationError
	kind, refusal := refusalKind(err)
	switch {
	case errors.As(err, &ve):
		c.add(Finding{Kind: KindManifestInvalid, Subject: "manifest", Message: err.Error()})
		return nil
	case refusal:
		c.add(refusalFinding(kind, "manifest", err))
		return nil
	case err != nil:
		c.unreachable("manifest", fmt.Errorf("fetching the manifest: %w", err))
		return nil
	}
	m := s.Manifest
	c.update(func(d *Decision) {
		d.Release, d.Generation, d.ManifestDigest, d.ManifestLocation = m.Release.Name, m.Release.Generation, s.Digest, s.Location
		d.ManifestCachedAt = s.CachedAt
	})
	if cfg.Verifier == nil && !cfg.AllowUnsigned {
		c.add(Finding{Kind: KindManifestUnsigned, Subject: m.ID(), Message: "no verifier configured and unsigned manifests are not allowed"})
		return nil
	}
	if cfg.Verifier != nil {
		// With AllowUnsigned the verifier still refuses a wrong signature;
		// it only lets a missing one pass.
		if err := cfg.Verifier.Verify(ctx, s); err != nil {
			if verdict.IsUnavailable(err) {
				c.unreachable("manifest signature", err)
			} else {
				c.add(Finding{Kind: KindManifestSignature, Subject: m.ID(), Message: err.Error()})
			}
			return nil
		}
	}
	if cfg.AllowUnsigned {
		// Every report says that signatures were not required.
		c.update(func(d *Decision) { d.Unsigned = true })
		c.add(Finding{Kind: KindManifestUnsigned, Severity: Warn, Subject: m.ID(),
			Message: "unsigned manifests are accepted (--insecure-allow-unsigned): this manifest's signature may not have been verified"})
	}
	if now := cfg.Now(); m.Expired(now) {
		c.add(Finding{Kind: KindManifestExpired, Subject: m.ID(), Got: now.UTC().Format(time.RFC3339), Want: "before " + m.Release.ExpiresAt.UTC().Format(time.RFC3339),
			Message: fmt.Sprintf("manifest %s expired at %s", m.ID(), m.Release.ExpiresAt.UTC().Format(time.RFC3339))})
		return nil
	}
	if cfg.Guard != nil {
		if err := cfg.Guard.Check(ctx, s); err != nil {
			if kind, ok := refusalKind(err); ok {
				c.add(refusalFinding(kind, m.ID(), err))
			} else {
				c.unreachable("trusted state", fmt.Errorf("reading the trusted state: %w", err))
			}
			return nil
		}
	}
	return m
}

// image compares the observation with the manifest image.
func (c *checker) image(m *manifest.Manifest, o *running.Observation, err error) {
	cfg := c.cfg
	if err != nil {
		c.unreachable("running digest", fmt.Errorf("observing the running image: %w", err))
		return
	}
	c.update(func(d *Decision) {
		d.Running = o
		if !o.ImageID.IsZero() {
			d.RunningDigest = o.ImageID
		} else if len(o.RepoDigests) > 0 {
			d.RunningDigest = o.RepoDigests[0]
		}
	})
	if o.ImageID.IsZero() && (len(o.Unpinned) > 0 || len(o.RepoDigests) == 0) {
		got := strings.Join(o.Unpinned, ", ")
		if got == "" {
			got = o.Reference
		}
		c.add(Finding{Kind: KindImageNotPinned, Subject: "image " + cfg.Image, Got: got, Want: "a sha256 digest",
			Message: fmt.Sprintf("%s reports no digest for the running image (only %q): a tag proves nothing", o.Source, got)})
		return
	}
	if m == nil {
		return
	}
	im, ok := c.pickImage(m)
	if !ok {
		return
	}
	match, f := Match(im, o, cfg.Platform)
	if f != nil {
		c.add(*f)
		return
	}
	c.update(func(d *Decision) { d.Match = match })
}

// lookupImage returns the image role name of m; "" is m's only image.
func lookupImage(m *manifest.Manifest, name string) (*manifest.Image, bool) {
	if name == "" && len(m.Images) == 1 {
		return &m.Images[0], true
	}
	return m.Image(name)
}

// pickImage returns the manifest image to compare with.
func (c *checker) pickImage(m *manifest.Manifest) (*manifest.Image, bool) {
	name := c.cfg.Image
	if im, ok := lookupImage(m, name); ok {
		if name == "" {
			c.update(func(d *Decision) { d.Image = im.Name })
		}
		return im, true
	}
	var names []string
	for _, im := range m.Images {
		names = append(names, im.Name)
	}
	msg := fmt.Sprintf("manifest %s has no image %q (it has: %s)", m.ID(), name, strings.Join(names, ", "))
	if name == "" {
		msg = fmt.Sprintf("manifest %s has %d images (%s): name the one this instance runs", m.ID(), len(names), strings.Join(names, ", "))
	}
	c.add(Finding{Kind: KindImageNotNamed, Subject: "image " + name, Message: msg})
	return nil, false
}

// Match compares what a runtime reported with a manifest image on
// platform (os/arch[/variant]), by manifest.Image.Identify's rule: a match
// is the image's index digest, the platform's manifest digest or the
// platform's config digest, and nothing else (a single-platform image's
// digest is not a match on another platform); it returns which ("index",
// "manifest", "config"). When the runtime reports an image ID, that
// identity alone decides; otherwise a repo digest must match and none may
// belong to another platform. An index digest matches only on a platform
// the index holds, and when the runtime reports the image's own platform
// (Docker's image inspect) it must be platform too. A mismatch is returned
// as an image-digest-mismatch finding.
func Match(im *manifest.Image, o *running.Observation, platform string) (string, *Finding) {
	subject := "image " + im.Name
	judge := func(d manifest.Digest) (match, other string) {
		match, p := im.Identify(d, platform)
		if p != nil {
			other = p.String()
		}
		return match, other
	}
	mismatch := func(d manifest.Digest, other string) *Finding {
		f := &Finding{Kind: KindImageDigestMismatch, Subject: subject, Got: d.String(), Want: want(im, platform)}
		if other != "" {
			f.Message = fmt.Sprintf("the running image (%s) is %s, the %s image of %s; this instance is %s", o.Source, d, other, im.Ref, platform)
		} else {
			f.Message = fmt.Sprintf("the running image (%s) is %s, which is not %s (%s) for %s", o.Source, d, im.Ref, im.Digest, platform)
		}
		return f
	}
	if o.Platform != "" && platform != "" {
		// The runtime says what the image is: it must be the gate's
		// platform, whatever digest it reports.
		if p, ok := manifest.ParsePlatform(o.Platform); !ok || !manifest.PlatformMatches(p, platform) {
			d := o.ImageID
			if d.IsZero() && len(o.RepoDigests) > 0 {
				d = o.RepoDigests[0]
			}
			return "", &Finding{Kind: KindImageDigestMismatch, Subject: subject, Got: o.Platform + " " + d.String(), Want: platform + ": " + want(im, platform),
				Message: fmt.Sprintf("the running image (%s) is a %s image; this instance is %s", o.Source, o.Platform, platform)}
		}
	}
	if !o.ImageID.IsZero() {
		match, other := judge(o.ImageID)
		if match == "" {
			return "", mismatch(o.ImageID, other)
		}
		return match, nil
	}
	best := ""
	for _, d := range o.RepoDigests {
		match, other := judge(d)
		if other != "" {
			return "", mismatch(d, other)
		}
		if best == "" {
			best = match
		}
	}
	if best == "" && len(o.RepoDigests) > 0 {
		return "", mismatch(o.RepoDigests[0], "")
	}
	return best, nil
}

// want describes the digests that would match.
func want(im *manifest.Image, platform string) string {
	ds := []string{im.Digest.String()}
	for _, p := range im.Platforms {
		if manifest.PlatformMatches(p, platform) && p.Digest != im.Digest {
			ds = append(ds, p.Digest.String(), p.Config.String())
		} else if manifest.PlatformMatches(p, platform) {
			ds = append(ds, p.Config.String())
		}
	}
	return strings.Join(ds, " or ")
}

// served maps the probed pages to asset IDs and checks them against the
// manifest; it returns the served IDs.
func (c *checker) served(m *manifest.Manifest, pages []*probe.Page, errs []error) []string {
	cfg := c.cfg
	var ok []*probe.Page
	for i, err := range errs {
		if err != nil {
			c.unreachable("probe "+cfg.Probes[i], err)
			continue
		}
		ok = append(ok, pages[i])
	}
	if m == nil || len(cfg.Probes) == 0 {
		return nil
	}
	if !cfg.AssetFreePages {
		for _, p := range ok {
			if one := probe.Map([]*probe.Page{p}, m.Assets.CDN); len(one.IDs) == 0 && len(one.Foreign) == 0 {
				c.add(Finding{Kind: KindProbeNoAssets, Subject: p.URL, Want: "a page that references the release's assets",
					Message: fmt.Sprintf("the probed page %s references no asset, and so proves nothing about what the instance serves (declare an asset-free page explicitly if it is one)", p.URL)})
			}
		}
	}
	mapped := probe.Map(ok, m.Assets.CDN)
	files := make([]manifest.File, 0, len(mapped.IDs))
	for _, id := range mapped.IDs {
		f, found := m.Assets.File(id)
		if !found {
			c.add(Finding{Kind: KindAssetNotInManifest, Subject: id, Want: "an asset of " + m.ID(),
				Message: fmt.Sprintf("the instance serves %s, which manifest %s does not list", id, m.ID())})
			f = manifest.File{Path: id, SHA256: strings.Repeat("0", 64)}
		}
		files = append(files, f)
	}
	for _, u := range mapped.Foreign {
		if hostAllowed(u, cfg.AllowHosts) {
			continue
		}
		c.add(Finding{Kind: KindAssetForeignHost, Subject: u, Want: "a CDN base of the manifest, the instance, or an allowed host",
			Message: fmt.Sprintf("the instance references %s, on a host that is neither a CDN base of %s nor its own nor allowed", u, m.ID())})
	}
	c.update(func(d *Decision) {
		d.Served, d.Foreign = mapped.IDs, mapped.Foreign
		d.ServedFingerprint = manifest.Fingerprint(files)
	})
	return mapped.IDs
}

// hostAllowed reports whether the URL's host is one of allow: "host",
// "host:port" or "*.domain" (any subdomain of domain).
func hostAllowed(rawURL string, allow []string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host, hostPort := strings.ToLower(u.Hostname()), strings.ToLower(u.Host)
	for _, a := range allow {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == "":
		case strings.HasPrefix(a, "*."):
			if strings.HasSuffix(host, a[1:]) {
				return true
			}
		case a == host || a == hostPort:
			return true
		}
	}
	return false
}

// cdn checks the served assets (and the sample) on the CDN. Assets that
// failed on TLS make no finding of their own: it returns their hosts
// (with a reason), for certificates to report once per endpoint.
func (c *checker) cdn(ctx context.Context, m *manifest.Manifest, served []string) (tlsFailed map[string]string) {
	cfg := c.cfg
	var known, unknown []string
	isServed := map[string]bool{}
	for _, id := range served {
		isServed[id] = true
		if _, ok := m.Assets.File(id); ok {
			known = append(known, id)
		} else {
			unknown = append(unknown, id)
		}
	}
	paths := known
	switch {
	case cfg.AllAssets:
		paths = paths[:0:0]
		for _, f := range m.Assets.Files {
			paths = append(paths, f.Path)
		}
	case cfg.Sample > 0:
		var rest []string
		for _, f := range m.Assets.Files {
			if !isServed[f.Path] {
				rest = append(rest, f.Path)
			}
		}
		cfg.Rand.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		paths = append(append([]string(nil), known...), rest[:min(cfg.Sample, len(rest))]...)
		sort.Strings(paths)
	}
	var wg sync.WaitGroup
	if len(unknown) > 0 {
		wg.Go(func() { c.unlisted(ctx, m, unknown) })
	}
	if len(paths) > 0 {
		rep, err := cdn.Check(ctx, m.Assets, cdn.Options{Paths: paths, Client: cfg.Client, Logger: cfg.Logger})
		if err != nil {
			c.unreachable("CDN", fmt.Errorf("checking the CDN: %w", err))
		} else {
			c.update(func(d *Decision) { d.CDNChecked += len(rep.Results) })
			for _, r := range rep.Results {
				if r.Status == cdn.StatusTLS {
					if u, err := url.Parse(r.URL); err == nil {
						if tlsFailed == nil {
							tlsFailed = map[string]string{}
						}
						tlsFailed[u.Host] = r.Reason
						continue
					}
				}
				if f := cdnFinding(r); f != nil {
					c.add(*f)
				}
			}
		}
	}
	wg.Wait()
	return tlsFailed
}

// cdnFinding turns a CDN result into a finding (nil for ok). A status
// this package does not know refuses, as could-not-check.
func cdnFinding(r cdn.Result) *Finding {
	f := &Finding{Subject: r.Path, Got: r.Reason, Message: fmt.Sprintf("%s at %s: %s", r.Status, r.URL, r.Reason)}
	switch r.Status {
	case cdn.StatusOK:
		return nil
	case cdn.StatusMissing:
		f.Kind, f.Want = KindAssetMissingOnCDN, "200"
		f.Message = fmt.Sprintf("%s is missing on the CDN: %s answers %s", r.Path, r.URL, r.Reason)
	case cdn.StatusWrongSize, cdn.StatusWrongContent:
		f.Kind, f.Want = KindAssetContentMismatch, "the recorded bytes"
	case cdn.StatusLoop:
		f.Kind = KindCDNLoop
	default:
		f.Kind = requestKind(r.Err)
	}
	return f
}

// unlisted checks served assets that the manifest lacks: present on the
// CDN or not (their content cannot be checked).
func (c *checker) unlisted(ctx context.Context, m *manifest.Manifest, ids []string) {
	hc := c.cfg.Client.HTTPClient()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, base := range m.Assets.CDN {
		for _, id := range ids {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				u := strings.TrimSuffix(base, "/") + "/" + (&url.URL{Path: id}).EscapedPath()
				req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
				if err != nil {
					c.unreachable("CDN", err)
					return
				}
				resp, err := hc.Do(req)
				c.update(func(d *Decision) { d.CDNChecked++ })
				if err != nil {
					var le *transport.LoopError
					if errors.As(err, &le) {
						c.add(Finding{Kind: KindCDNLoop, Subject: id, Message: le.Error()})
						return
					}
					c.unreachable("CDN "+u, err)
					return
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
				case http.StatusForbidden, http.StatusNotFound, http.StatusGone:
					c.add(Finding{Kind: KindAssetMissingOnCDN, Subject: id, Got: resp.Status, Want: "200",
						Message: fmt.Sprintf("%s is missing on the CDN: %s answers %s", id, u, resp.Status)})
				default:
					c.unreachable("CDN "+u, fmt.Errorf("HEAD %s: %s", u, resp.Status))
				}
			}()
		}
	}
	wg.Wait()
}

// certificates reports the certificate of every TLS endpoint the
// client touched: one expired (tls-expiring) or that did not verify
// (tls-invalid) refuses; one valid for at most TLSWarning more is a
// tls-expiring warning. tlsFailed are hosts whose TLS failed without a
// certificate to show (a handshake that failed before one was sent), with
// why: each refuses as tls-invalid.
func (c *checker) certificates(tlsFailed map[string]string) {
	now := c.cfg.Now()
	certs := c.cfg.Client.Certificates()
	sort.Slice(certs, func(i, j int) bool { return certs[i].Host < certs[j].Host })
	for _, cert := range certs {
		delete(tlsFailed, cert.Host)
		left := cert.NotAfter.Sub(now)
		notAfter := cert.NotAfter.UTC().Format(time.RFC3339)
		f := Finding{Kind: KindTLSExpiring, Subject: cert.Host, Got: notAfter}
		switch {
		case left <= 0:
			f.Want = "a certificate valid at " + now.UTC().Format(time.RFC3339)
			f.Message = fmt.Sprintf("the certificate of %s (%s) expired at %s", cert.Host, cert.Subject, notAfter)
		case cert.Error != "":
			f.Kind, f.Got = KindTLSInvalid, cert.Error
			f.Message = fmt.Sprintf("the certificate of %s (%s) does not verify: %s", cert.Host, cert.Subject, cert.Error)
		case left <= c.cfg.TLSWarning:
			f.Severity = Warn
			f.Want = "valid for more than " + c.cfg.TLSWarning.String()
			f.Message = fmt.Sprintf("the certificate of %s (%s) expires in %s, at %s", cert.Host, cert.Subject, left.Round(time.Hour), notAfter)
		default:
			continue
		}
		c.add(f)
	}
	hosts := make([]string, 0, len(tlsFailed))
	for h := range tlsFailed {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		c.add(Finding{Kind: KindTLSInvalid, Subject: h, Got: tlsFailed[h], Message: fmt.Sprintf("TLS with %s failed: %s", h, tlsFailed[h])})
	}
}
