package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/agentapi"
	"github.com/lockstep-dev/lockstep/internal/imagename"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// Defaults of Options, documented in docs/fleet.md.
const (
	DefaultConcurrency    = 64
	DefaultTimeout        = 5 * time.Second
	DefaultMaxBody        = 1 << 20
	DefaultMaxUnreachable = 0.1
)

// Options configures Check.
type Options struct {
	// Client sends the requests; default a transport.Client with the
	// default policy and Timeout as its per-attempt timeout.
	Client *transport.Client
	// Concurrency bounds the statuses fetched at once; default 64.
	Concurrency int
	// Timeout bounds each instance's fetch, retries included; default 5 s.
	// The caller's context is the overall deadline: instances not fetched
	// by then are reported unreachable.
	Timeout time.Duration
	// MaxBody caps a status body; default 1 MiB. A larger one is reported
	// (problem "oversized").
	MaxBody int64
	// MaxUnreachable is the fraction of instances that may be unreachable
	// (or give no usable status) before Check cannot say (more than this
	// fraction: *verdict.UnavailableError). 0 tolerates none; the CLI's
	// default is DefaultMaxUnreachable, which makes any unreachable instance
	// too many in a fleet of fewer than ten.
	MaxUnreachable float64
	// Token, if set, is sent as a bearer token.
	Token string
	// Logger gets one line per unusable instance; default silent.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Names normalises the repositories of agentless targets' images
	// (registry aliases); the zero value has none.
	Names imagename.Names
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Client == nil {
		p := transport.DefaultPolicy()
		p.Timeout = o.Timeout
		o.Client = transport.New(p)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Check fetches every target's status, compares it with m and returns the
// report. The error is nil when every reachable instance runs the release
// exactly and no more than MaxUnreachable of them were unreachable; a
// *verdict.MismatchError when any diverges (whatever the unreachable count:
// a known divergence is a fact); a *verdict.UnavailableError when too many
// were unreachable, or there were no targets. The report is returned with
// either error.
func Check(ctx context.Context, m *manifest.Signed, targets []Target, o Options) (*Report, error) {
	o.defaults()
	start := o.Now()
	before := o.Client.Stats()
	hc := o.Client.HTTPClient()
	// Each result is folded into the report as it comes (a tally keeps a
	// name per instance, not its status), so that memory grows with the
	// fleet by little more than the names the report lists.
	t := newTally(m, len(targets))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(o.Concurrency, max(len(targets), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				t.add(i, o.instance(ctx, hc, m, targets[i]))
			}
		}()
	}
	for i := range targets {
		work <- i
	}
	close(work)
	wg.Wait()
	after := o.Client.Stats()
	r := t.report(o.MaxUnreachable)
	r.CheckedAt = start.UTC()
	r.DurationSeconds = o.Now().Sub(start).Seconds()
	r.Requests, r.Retries = after.Requests-before.Requests, after.Retries-before.Retries
	return r, r.err()
}

func (o *Options) instance(ctx context.Context, hc *http.Client, m *manifest.Signed, t Target) Instance {
	if t.Observed != nil {
		return observedInstance(m.Manifest, t, o.Names)
	}
	in := Instance{Name: t.InstanceID, InstanceID: t.InstanceID, Target: t.URL, Spec: t.Spec}
	if in.Name == "" {
		in.Name = t.URL
	}
	st, p := o.fetch(ctx, hc, t)
	if p != nil {
		in.Problem = p
		o.Logger.Warn("no usable status", "instance", in.Name, "problem", p.Kind, "err", p.Message)
		return in
	}
	in.fill(st)
	if st.State == agentapi.StatePending {
		in.Problem = &Problem{Kind: ProblemPending, Message: "the agent has not finished a check yet"}
		return in
	}
	in.Differences = compare(m.Manifest, m.Digest, st)
	var running manifest.Digest
	if st.Running != nil {
		running = st.Running.Digest
	}
	in.identity = identity(m.Manifest, st.Image, st.Platform, running)
	return in
}

// identity is what an instance is grouped by: the index digest of the
// release image it runs when the running digest is one of that image's
// (index, manifest or config digest, as manifest.Image.Matches decides), so
// that runtimes reporting different digests of one image form one group;
// otherwise the running digest as reported.
func identity(m *manifest.Manifest, image, platform string, running manifest.Digest) string {
	if im, ok := imageOf(m, image); ok && im.Matches(running, platform) {
		return im.Digest.String()
	}
	return running.String()
}

// fetch gets and decodes one status.
// status is the part of an agent's status (agent.Status, the documented
// shape, built of agentapi's wire types) that the fleet check reads. Decoding only these fields keeps the
// check working across agent versions whose decisions carry more.
type status struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Instance   agentapi.Identity     `json:"instance"`
	State      string                `json:"state"`
	Image      string                `json:"image"`
	Platform   string                `json:"platform"`
	Running    *agentapi.Running     `json:"running"`
	Manifest   *agentapi.ManifestRef `json:"manifest"`
	Assets     *agentapi.AssetStatus `json:"assets"`
	Decision   *struct {
		Findings []struct {
			Kind string `json:"kind"`
		} `json:"findings"`
	} `json:"decision"`
	CheckedAt *time.Time `json:"checkedAt"`
}

func (o *Options) fetch(ctx context.Context, hc *http.Client, t Target) (*status, *Problem) {
	if t.URL == "" {
		return nil, &Problem{Kind: ProblemNoAddress, Message: "the instance has no private address"}
	}
	if err := ctx.Err(); err != nil {
		return nil, &Problem{Kind: ProblemDeadline, Message: "the check's deadline passed before the instance was asked"}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return nil, &Problem{Kind: ProblemUnreachable, Message: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	// One request per instance: keeping thousands of idle connections open
	// would only hold file descriptors on both sides.
	req.Close = true
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, netProblem(ctx, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, &Problem{Kind: ProblemUnauthorized, Message: resp.Status}
	case resp.StatusCode != http.StatusOK:
		return nil, &Problem{Kind: ProblemHTTPStatus, Message: resp.Status}
	}
	buf := bodies.Get().(*bytes.Buffer)
	defer putBody(buf)
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, o.MaxBody+1)); err != nil {
		return nil, netProblem(ctx, err)
	}
	if int64(buf.Len()) > o.MaxBody {
		return nil, &Problem{Kind: ProblemOversized, Message: fmt.Sprintf("the status is larger than %d bytes", o.MaxBody)}
	}
	var st status
	if err := json.Unmarshal(buf.Bytes(), &st); err != nil {
		return nil, &Problem{Kind: ProblemInvalid, Message: "the status is not valid JSON: " + err.Error()}
	}
	if st.APIVersion != agentapi.StatusAPIVersion || st.Kind != agentapi.StatusKind {
		return nil, &Problem{Kind: ProblemInvalid, Message: fmt.Sprintf("the status is %s %s, want %s %s", st.APIVersion, st.Kind, agentapi.StatusAPIVersion, agentapi.StatusKind)}
	}
	return &st, nil
}

// bodies holds the buffers statuses are read into, so that a check of a
// large fleet does not allocate one per instance (json.Unmarshal copies
// what it keeps).
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBody returns b to the pool, unless a large status grew it.
func putBody(b *bytes.Buffer) {
	if b.Cap() > 64<<10 {
		return
	}
	b.Reset()
	bodies.Put(b)
}

func netProblem(ctx context.Context, err error) *Problem {
	var ne net.Error
	var de *transport.DeniedAddressError
	var re *transport.RedirectError
	if errors.As(err, &de) || errors.As(err, &re) {
		return &Problem{Kind: ProblemRequestRefused, Message: err.Error()}
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		return &Problem{Kind: ProblemTimeout, Message: err.Error()}
	}
	return &Problem{Kind: ProblemUnreachable, Message: err.Error()}
}

// compare lists how st differs from the release m (whose digest is md).
func compare(m *manifest.Manifest, md manifest.Digest, st *status) []Difference {
	var diffs []Difference
	var running manifest.Digest
	if st.Running != nil {
		running = st.Running.Digest
	}
	im, ok := imageOf(m, st.Image)
	switch {
	case !ok:
		diffs = append(diffs, Difference{Kind: DiffImage, Got: running.String(), Message: fmt.Sprintf("the agent checks image %q, which the manifest does not have", st.Image)})
	case !im.Matches(running, st.Platform):
		diffs = append(diffs, imageDifference(im, running, st.Platform))
	}
	want := fmt.Sprint(m.Release.Generation)
	switch {
	case st.Manifest == nil:
		diffs = append(diffs, Difference{Kind: DiffGeneration, Want: []string{want}, Message: "the agent has no manifest to check against"})
	case st.Manifest.Generation != m.Release.Generation:
		diffs = append(diffs, Difference{Kind: DiffGeneration, Got: fmt.Sprint(st.Manifest.Generation), Want: []string{want},
			Message: fmt.Sprintf("checks against generation %d, the release is generation %d", st.Manifest.Generation, m.Release.Generation)})
	case st.Manifest.Digest != md:
		diffs = append(diffs, Difference{Kind: DiffManifest, Got: st.Manifest.Digest.String(), Want: []string{md.String()},
			Message: fmt.Sprintf("checks against manifest %s, not %s, at the same generation", st.Manifest.Digest, md)})
	}
	if a := st.Assets; a != nil {
		switch {
		case len(a.NotInManifest) > 0 || a.NotInManifestOmitted > 0:
			n := len(a.NotInManifest) + a.NotInManifestOmitted
			diffs = append(diffs, Difference{Kind: DiffAssets, Got: a.Fingerprint.String(), Assets: a.NotInManifest,
				Message: fmt.Sprintf("serves %d asset ID%s the manifest lacks", n, plural(n))})
		case a.Complete && a.Fingerprint != m.Assets.Fingerprint:
			diffs = append(diffs, Difference{Kind: DiffAssets, Got: a.Fingerprint.String(), Want: []string{m.Assets.Fingerprint.String()},
				Message: "serves every asset ID of the manifest, with a different fingerprint"})
		}
	}
	if len(diffs) == 0 && st.State != agentapi.StateAdmitted {
		d := Difference{Kind: DiffNotAdmitted, Got: st.State, Want: []string{agentapi.StateAdmitted}, Message: "its agent " + st.State + " it"}
		if st.Decision != nil {
			for _, f := range st.Decision.Findings {
				d.Findings = append(d.Findings, f.Kind)
			}
		}
		diffs = append(diffs, d)
	}
	return diffs
}

// imageDifference says how running (not a digest of im for platform)
// differs from the release image.
func imageDifference(im *manifest.Image, running manifest.Digest, platform string) Difference {
	d := Difference{Kind: DiffImage, Got: running.String(), Want: wantDigests(im, platform)}
	if running.IsZero() {
		d.Message = "the running digest could not be observed"
	} else {
		d.Message = fmt.Sprintf("runs %s, which is not image %s of the release for %s", running, im.Name, orAny(platform))
	}
	return d
}

func imageOf(m *manifest.Manifest, name string) (*manifest.Image, bool) {
	if name == "" && len(m.Images) == 1 {
		return &m.Images[0], true
	}
	return m.Image(name)
}

// wantDigests lists the digests that would match: the index and, for the
// platform (every platform if none), the manifest and config digests.
func wantDigests(im *manifest.Image, platform string) []string {
	out := []string{im.Digest.String()}
	for _, p := range im.Platforms {
		if platform != "" && !manifest.PlatformMatches(p, platform) {
			continue
		}
		if p.Digest != im.Digest {
			out = append(out, p.Digest.String())
		}
		if !p.Config.IsZero() {
			out = append(out, p.Config.String())
		}
	}
	return out
}

func orAny(platform string) string {
	if platform == "" {
		return "any platform"
	}
	return platform
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
