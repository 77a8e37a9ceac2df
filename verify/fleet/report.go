package fleet

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// The identity of the report document.
const (
	ReportAPIVersion = "lockstep.dev/v1"
	ReportKind       = "FleetReport"
)

// The results of a check.
const (
	ResultMatch      = "match"
	ResultDivergent  = "divergent"
	ResultUnverified = "unverified"
)

// The kinds of difference, stable in JSON.
const (
	// DiffImage: the running digest is not one of the image's digests for
	// the instance's platform (or could not be observed).
	DiffImage = "image-digest"
	// DiffAssets: the instance serves asset IDs the manifest lacks (or, with
	// a complete served set, another fingerprint).
	DiffAssets = "assets"
	// DiffGeneration: the agent checks against another generation (or has
	// no manifest).
	DiffGeneration = "generation"
	// DiffManifest: the agent checks against another manifest of the same
	// generation.
	DiffManifest = "manifest-digest"
	// DiffNotAdmitted: nothing above, yet the agent's last check did not
	// admit the instance (e.g. an asset missing on the CDN).
	DiffNotAdmitted = "not-admitted"
)

// The kinds of problem that leave an instance without a usable status,
// stable in JSON. Each counts as unreachable.
const (
	ProblemNoAddress   = "no-address"
	ProblemUnreachable = "unreachable"
	// ProblemRequestRefused: the check refused to send or follow the
	// request (a link-local or metadata address, a redirect to another
	// origin); the instance counts as unreachable.
	ProblemRequestRefused = "request-refused"
	ProblemTimeout        = "timeout"
	ProblemDeadline       = "deadline"
	ProblemUnauthorized   = "unauthorized"
	ProblemHTTPStatus     = "http-status"
	ProblemInvalid        = "invalid-status"
	ProblemOversized      = "oversized"
	ProblemPending        = "pending"
)

// Report is the result of a fleet check. Its JSON shape is stable and
// documented in docs/fleet.md; fields are only ever added.
type Report struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Manifest   ManifestRef `json:"manifest"`
	Summary    Summary     `json:"summary"`
	// Groups partitions the reachable instances by what they run, largest
	// first.
	Groups []Group `json:"groups"`
	// Divergent and Unreachable list every instance that differs or gave
	// no usable status, in target order.
	Divergent   []Instance `json:"divergent"`
	Unreachable []Instance `json:"unreachable"`
	// InUse lists every manifest the reachable agents check against, with
	// the image digests seen running under it: what `lockstep gc --in-use`
	// must keep. Agentless instances that run the release count under the
	// release's manifest; those that run anything else under an entry with
	// an empty manifestDigest, which keeps their image digests.
	InUse           []InUse   `json:"inUse"`
	CheckedAt       time.Time `json:"checkedAt"`
	DurationSeconds float64   `json:"durationSeconds"`
	// Requests and Retries count the HTTP attempts sent.
	Requests int64 `json:"requests"`
	Retries  int64 `json:"retries"`
}

// ManifestRef names the release the fleet was checked against.
type ManifestRef struct {
	Release     string `json:"release"`
	Generation  int64  `json:"generation"`
	Digest      string `json:"digest"`
	Fingerprint string `json:"fingerprint"`
	Location    string `json:"location,omitempty"`
}

// Summary counts the fleet.
type Summary struct {
	// Result is match, divergent or unverified (exit 0, 1, 3).
	Result      string `json:"result"`
	Instances   int    `json:"instances"`
	Match       int    `json:"match"`
	Divergent   int    `json:"divergent"`
	Unreachable int    `json:"unreachable"`
	// MaxUnreachable is the tolerated fraction; UnreachableAllowed the
	// number of instances it allows for this fleet.
	MaxUnreachable     float64 `json:"maxUnreachable"`
	UnreachableAllowed int     `json:"unreachableAllowed"`
	// Agentless counts the instances read from an orchestrator (ecs:,
	// k8s:), whose served assets were not checked.
	Agentless int `json:"agentless,omitempty"`
}

// Group is the reachable instances that share a running image, a
// served-asset fingerprint and a manifest generation. Instances whose
// runtimes report different digests of one release image (its index, a
// platform's manifest or config digest) are one group, whose Running is the
// image's index digest; any other running digest is its own group.
type Group struct {
	Running     string `json:"running"`
	Fingerprint string `json:"fingerprint"`
	Generation  int64  `json:"generation"`
	// Match is true when the group runs the release exactly.
	Match bool `json:"match"`
	Count int  `json:"count"`
	// Agentless is true for a group of instances read from an orchestrator
	// (ecs:, k8s:) rather than from agents: their served assets are not
	// visible, so Fingerprint is empty and not compared.
	Agentless bool `json:"agentless,omitempty"`
	// Instances names the group's instances.
	Instances []string `json:"instances"`
}

// Instance is one instance's outcome.
type Instance struct {
	// Name is the instance ID where known, else the hostname, else the URL.
	Name       string `json:"name"`
	InstanceID string `json:"instanceId,omitempty"`
	ASG        string `json:"asg,omitempty"`
	Hostname   string `json:"hostname,omitempty"`
	Target     string `json:"target"`
	Spec       string `json:"spec"`
	// State is the agent's state (pending, admitted, refused, unverified).
	State       string     `json:"state,omitempty"`
	Running     string     `json:"running,omitempty"`
	Fingerprint string     `json:"fingerprint,omitempty"`
	Release     string     `json:"release,omitempty"`
	Generation  int64      `json:"generation,omitempty"`
	Manifest    string     `json:"manifest,omitempty"`
	CheckedAt   *time.Time `json:"checkedAt,omitempty"`
	// Differences says how it diverges; Problem why it gave no usable
	// status.
	Differences []Difference `json:"differences,omitempty"`
	Problem     *Problem     `json:"problem,omitempty"`
	// Agentless is true for a container read from an orchestrator (ecs:,
	// k8s:): only its running digest is known, its served assets and its
	// manifest generation are not visible.
	Agentless bool `json:"agentless,omitempty"`

	// identity is what the instance is grouped by (see identity).
	identity string
}

// Difference is one way an instance diverges from the release.
type Difference struct {
	Kind string `json:"kind"`
	// Got is what the instance has; Want what would match.
	Got  string   `json:"got,omitempty"`
	Want []string `json:"want,omitempty"`
	// Assets lists served asset IDs the manifest lacks (kind assets).
	Assets []string `json:"assets,omitempty"`
	// Findings lists the agent's finding kinds (kind not-admitted).
	Findings []string `json:"findings,omitempty"`
	Message  string   `json:"message"`
}

// Problem is why an instance gave no usable status.
type Problem struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// InUse is one manifest seen in use across the fleet.
type InUse struct {
	ManifestDigest string   `json:"manifestDigest"`
	Release        string   `json:"release"`
	Generation     int64    `json:"generation"`
	ImageDigests   []string `json:"imageDigests"`
	Instances      int      `json:"instances"`
}

func (in *Instance) fill(st *status) {
	if st.Instance.InstanceID != "" {
		in.InstanceID = st.Instance.InstanceID
	}
	in.ASG, in.Hostname, in.State = st.Instance.ASG, st.Instance.Hostname, st.State
	if n := st.Instance.Name(); n != "" {
		in.Name = n
	}
	if st.Running != nil {
		in.Running = st.Running.Digest.String()
	}
	if st.Assets != nil {
		in.Fingerprint = st.Assets.Fingerprint.String()
	}
	if st.Manifest != nil {
		in.Release, in.Generation, in.Manifest = st.Manifest.Release, st.Manifest.Generation, st.Manifest.Digest.String()
	}
	in.CheckedAt = st.CheckedAt
}

// newReport is the report of instances, in target order.
func newReport(m *manifest.Signed, instances []Instance, maxUnreachable float64) *Report {
	t := newTally(m, len(instances))
	for i, in := range instances {
		t.add(i, in)
	}
	return t.report(maxUnreachable)
}

// tally folds instances into a report as they are checked, in any order
// (each with its index in the targets), so that a check of 100,000
// instances does not hold 100,000 statuses: it keeps each instance's name
// (the groups list them), the whole Instance only of those that diverge or
// are unreachable, and one entry per group and per manifest in use. The
// report it makes is the same as if the instances had come in target
// order. It is safe for concurrent use.
type tally struct {
	mu          sync.Mutex
	release     ManifestRef
	names       []string // by target index
	groups      map[groupKey]*groupTally
	divergent   []indexed
	unreachable []indexed
	inUse       map[string]*InUse
	images      map[string]map[string]bool
	agentless   int
	n           int
}

type groupKey struct {
	running, fingerprint string
	generation           int64
	agentless            bool
}

// groupTally is a group and its members' target indexes.
type groupTally struct {
	g       Group
	members []int
}

// indexed is an instance and its target index.
type indexed struct {
	i  int
	in Instance
}

func newTally(m *manifest.Signed, n int) *tally {
	return &tally{
		release: ManifestRef{
			Release: m.Manifest.Release.Name, Generation: m.Manifest.Release.Generation,
			Digest: m.Digest.String(), Fingerprint: m.Manifest.Assets.Fingerprint.String(), Location: m.Location,
		},
		names: make([]string, n), groups: map[groupKey]*groupTally{},
		inUse: map[string]*InUse{}, images: map[string]map[string]bool{},
	}
}

// add folds in the instance of target i.
func (t *tally) add(i int, in Instance) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	if in.Agentless {
		t.agentless++
	}
	if in.Problem != nil {
		t.unreachable = append(t.unreachable, indexed{i, in})
		return
	}
	if len(in.Differences) > 0 {
		t.divergent = append(t.divergent, indexed{i, in})
	}
	t.names[i] = in.Name
	id := in.identity
	if id == "" {
		id = in.Running
	}
	k := groupKey{id, in.Fingerprint, in.Generation, in.Agentless}
	g := t.groups[k]
	if g == nil {
		g = &groupTally{g: Group{Running: id, Fingerprint: in.Fingerprint, Generation: in.Generation, Match: true, Agentless: in.Agentless}}
		t.groups[k] = g
	}
	g.g.Count++
	g.members = append(g.members, i)
	g.g.Match = g.g.Match && len(in.Differences) == 0
	t.addInUse(in)
}

// addInUse counts the manifest in (reachable) checks against, with the
// image digest it runs.
func (t *tally) addInUse(in Instance) {
	md, release, generation := in.Manifest, in.Release, in.Generation
	if in.Agentless {
		// An orchestrator says what runs, not which manifest it was
		// checked against: a container that runs the release keeps the
		// release's manifest in use; any other keeps its digest in use
		// under no manifest, for gc to keep the manifests naming it.
		md, release, generation = "", "", 0
		if len(in.Differences) == 0 {
			md, release, generation = t.release.Digest, t.release.Release, t.release.Generation
		}
	}
	if md == "" && !(in.Agentless && in.Running != "") {
		return
	}
	u := t.inUse[md]
	if u == nil {
		u = &InUse{ManifestDigest: md, Release: release, Generation: generation, ImageDigests: []string{}}
		t.inUse[md], t.images[md] = u, map[string]bool{}
	}
	u.Instances++
	if in.Running != "" && !t.images[md][in.Running] {
		t.images[md][in.Running] = true
		u.ImageDigests = append(u.ImageDigests, in.Running)
	}
}

// report is the report of every instance added.
func (t *tally) report(maxUnreachable float64) *Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &Report{
		APIVersion: ReportAPIVersion, Kind: ReportKind, Manifest: t.release,
		Groups: []Group{}, Divergent: []Instance{}, Unreachable: []Instance{}, InUse: []InUse{},
	}
	byIndex := func(s []indexed) []Instance {
		sort.Slice(s, func(a, b int) bool { return s[a].i < s[b].i })
		out := make([]Instance, 0, len(s))
		for _, x := range s {
			out = append(out, x.in)
		}
		return out
	}
	r.Divergent = append(r.Divergent, byIndex(t.divergent)...)
	r.Unreachable = append(r.Unreachable, byIndex(t.unreachable)...)
	for _, g := range t.groups {
		sort.Ints(g.members)
		g.g.Instances = make([]string, 0, len(g.members))
		for _, i := range g.members {
			g.g.Instances = append(g.g.Instances, t.names[i])
		}
		r.Groups = append(r.Groups, g.g)
	}
	sort.Slice(r.Groups, func(i, j int) bool {
		a, b := r.Groups[i], r.Groups[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return fmt.Sprint(a.Running, a.Fingerprint, a.Generation, a.Agentless) < fmt.Sprint(b.Running, b.Fingerprint, b.Generation, b.Agentless)
	})
	for _, u := range t.inUse {
		sort.Strings(u.ImageDigests)
		r.InUse = append(r.InUse, *u)
	}
	sort.Slice(r.InUse, func(i, j int) bool { return r.InUse[i].ManifestDigest < r.InUse[j].ManifestDigest })
	n := t.n
	r.Summary = Summary{
		Instances: n, Divergent: len(r.Divergent), Unreachable: len(r.Unreachable),
		Match:          n - len(r.Divergent) - len(r.Unreachable),
		MaxUnreachable: maxUnreachable, UnreachableAllowed: allowed(maxUnreachable, n),
		Agentless: t.agentless,
	}
	switch {
	case r.Summary.Divergent > 0:
		r.Summary.Result = ResultDivergent
	case n == 0 || r.Summary.Unreachable > r.Summary.UnreachableAllowed:
		r.Summary.Result = ResultUnverified
	default:
		r.Summary.Result = ResultMatch
	}
	return r
}

// allowed is how many of n instances may be unreachable: the largest u
// with u/n ≤ fraction.
func allowed(fraction float64, n int) int {
	if fraction <= 0 {
		return 0
	}
	return min(n, int(fraction*float64(n)+1e-9))
}

func (r *Report) err() error {
	s := r.Summary
	switch s.Result {
	case ResultDivergent:
		names := make([]string, 0, 3)
		for _, in := range r.Divergent[:min(3, len(r.Divergent))] {
			names = append(names, in.Name)
		}
		if len(r.Divergent) > 3 {
			names = append(names, "…")
		}
		return &verdict.MismatchError{
			Subject: "fleet",
			Got:     fmt.Sprintf("%d of %d instances divergent (%s)", s.Divergent, s.Instances, strings.Join(names, ", ")),
			Want:    "every instance on " + r.Manifest.Release + "@" + fmt.Sprint(r.Manifest.Generation),
		}
	case ResultUnverified:
		if s.Instances == 0 {
			return &verdict.UnavailableError{Dependency: "fleet", Err: fmt.Errorf("no instances to check")}
		}
		return &verdict.UnavailableError{Dependency: "fleet", Err: fmt.Errorf("%d of %d instances unreachable, more than the %d (%g) allowed", s.Unreachable, s.Instances, s.UnreachableAllowed, s.MaxUnreachable)}
	}
	return nil
}
