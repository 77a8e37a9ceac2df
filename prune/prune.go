package prune

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/verdict"
)

// Options say what Run may delete. The embedded GCOptions are gc's:
// Keep, InUse and Running (AddReport reads a fleet report into them) keep
// generations by GC's rules; Delete deletes (without it Run is a dry
// run); Logger logs each delete at Info (default: none).
type Options struct {
	store.GCOptions
	// OlderThan keeps every generation created within it and every object
	// modified within it (0: no such rule). Set it above the time between
	// a pipeline's upload and its manifest reaching the store.
	OlderThan time.Duration
	// PruneUnknown deletes objects that no manifest of any release lists
	// (default: kept). It is refused when the release's kept generations
	// list no asset: then nothing shows that the origin is the release's.
	PruneUnknown bool
	// Channels, when set, are channels of the release that must exist: a
	// name that is not one of its channels (a mistyped one) is refused.
	Channels []string
	// Now is the clock of OlderThan (default time.Now).
	Now func() time.Time
}

// The reasons an object is kept.
const (
	KeptListed    = "a kept generation lists it"
	KeptOther     = "a manifest of another release lists it"
	KeptUnknown   = "no manifest lists it"
	KeptOtherSize = "its size is not what the manifests listing it recorded"
	KeptRecent    = "modified within OlderThan"
	KeptIrregular = "not a regular file"
	KeptChanged   = "it changed while prune ran"
	KeptNewer     = "a manifest stored while prune ran lists it"
	KeptRaced     = store.KeptRaced
)

// KeptYoung is why a generation is kept by OlderThan.
const KeptYoung = "created within OlderThan"

// Report is what Run found and did. Its JSON shape is documented in
// docs/cdn.md.
type Report struct {
	Release string `json:"release"`
	DryRun  bool   `json:"dryRun"`
	// Generations are the release's manifests, each with why it is kept
	// ("" for one whose assets may go).
	Generations []store.GCEntry `json:"generations"`
	// Deleted lists the objects deleted, or in a dry run those that would
	// be.
	Deleted []Entry `json:"deleted"`
	Kept    []Entry `json:"kept"`
	// Missing lists the assets of kept generations that the origin does
	// not hold: then nothing is deleted.
	Missing []Entry `json:"missing"`
}

// Entry is one object and the generations listing it (none for an
// object no manifest of the release lists), and the other releases whose
// manifests list it.
type Entry struct {
	Key         string   `json:"key"`
	Size        int64    `json:"size"`
	Generations []int64  `json:"generations,omitempty"`
	Releases    []string `json:"releases,omitempty"`
	Reason      string   `json:"reason,omitempty"`
}

// Run prunes origin of the assets of release's generations that are not
// kept. An object that a kept generation of release lists, or that any
// manifest of another release of the store lists, is never deleted:
// several releases may share one origin.
//
// It refuses, deleting nothing, whenever what it must keep cannot be
// known: a *verdict.OptionError (exit 2) for a bad option, a release the
// store does not hold (a mistyped name), a channel of Options.Channels the
// release does not have, or PruneUnknown when the kept generations list
// no asset; a *verdict.UnavailableError (exit 3) when the store is empty
// or not there, the release has no manifest or no channel, a channel
// names a manifest that is not stored, or the store, a manifest of any
// release, or the origin cannot be read; and a *verdict.MismatchError
// (exit 1) when an asset of a kept generation is missing from the origin
// (the skew prune guards against is already there, or the origin is not
// the CDN's). A failure while deleting returns the report so far with the
// error.
//
// Immediately before each delete it reads the store again (every
// release's manifests, the release's channels) and the object; after the
// last delete it reads the store once more, and a manifest stored in the
// window between a recheck and its delete that lists a deleted object is
// a *verdict.MismatchError naming the object, to be uploaded again (see
// docs/cdn.md for the guarantee and its limits).
func Run(ctx context.Context, st manifest.Store, release string, origin Origin, o Options) (*Report, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if o.OlderThan < 0 {
		return nil, &verdict.OptionError{Option: "OlderThan", Reason: "must not be negative"}
	}
	if err := manifest.ValidateName(release); err != nil {
		return nil, &verdict.OptionError{Option: "Release", Reason: err.Error(), Err: err}
	}
	start := now()
	p, rs, err := load(ctx, st, release, o, start)
	if err != nil {
		return nil, err
	}
	rep := &Report{Release: release, DryRun: !o.Delete, Generations: []store.GCEntry{}, Deleted: []Entry{}, Kept: []Entry{}, Missing: []Entry{}}
	for _, r := range rs {
		rep.Generations = append(rep.Generations, store.GCEntry{Digest: r.Digest, Generation: r.Generation, Reason: r.Reason})
	}
	objs, err := origin.List(ctx)
	if err != nil {
		return nil, verdict.Unavailable("origin", err)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
	present := map[string]bool{}
	for _, ob := range objs {
		present[ob.Key] = true
	}
	for _, k := range slices.Sorted(maps.Keys(p.kept)) {
		if !present[k] {
			rep.Missing = append(rep.Missing, Entry{Key: k, Generations: p.kept[k].gens})
		}
	}
	if len(rep.Missing) > 0 {
		m := rep.Missing[0]
		return rep, &verdict.MismatchError{Subject: "asset " + m.Key, Got: "nothing on the origin", Want: fmt.Sprintf("the asset of kept generation %d", m.Generations[0]),
			Reason: fmt.Sprintf("%d asset(s) of kept generations missing, so nothing is pruned", len(rep.Missing))}
	}
	if o.PruneUnknown && len(p.kept) == 0 {
		return rep, &verdict.OptionError{Option: "PruneUnknown", Reason: fmt.Sprintf("the kept generations of %s list no asset, so nothing shows that this origin is %s's: it would delete every object no manifest lists; nothing is pruned", release, release)}
	}
	type candidate struct {
		ob    Object
		entry Entry
	}
	var cands []candidate
	for _, ob := range objs {
		e := Entry{Key: ob.Key, Size: ob.Size}
		if ob.Irregular || !fs.ValidPath(ob.Key) {
			e.Reason = KeptIrregular
		}
		e.Releases = p.other[ob.Key]
		if u, ok := p.kept[ob.Key]; ok {
			e.Generations = u.gens
			if e.Reason == "" {
				e.Reason = KeptListed
			}
		} else if u, ok := p.free[ob.Key]; ok {
			e.Generations = u.gens
			if e.Reason == "" && len(e.Releases) > 0 {
				e.Reason = KeptOther
			}
			if e.Reason == "" && !slices.Contains(u.sizes, ob.Size) {
				e.Reason = KeptOtherSize
			}
		} else if e.Reason == "" && len(e.Releases) > 0 {
			e.Reason = KeptOther
		} else if e.Reason == "" && !o.PruneUnknown {
			e.Reason = KeptUnknown
		}
		if e.Reason == "" && o.OlderThan > 0 && start.Sub(ob.ModTime) < o.OlderThan {
			e.Reason = KeptRecent
		}
		if e.Reason != "" {
			rep.Kept = append(rep.Kept, e)
			continue
		}
		cands = append(cands, candidate{ob, e})
	}
	for _, c := range cands {
		e := c.entry
		if o.Delete {
			reason, err := p.recheck(ctx, st, c.ob.Key)
			if err != nil {
				return rep, unavailable("manifest store", err)
			}
			if reason == "" {
				err = origin.Delete(ctx, c.ob)
				if errors.Is(err, ErrChanged) {
					reason, err = KeptChanged, nil
				}
				if err != nil {
					return rep, verdict.Unavailable("origin", err)
				}
			}
			if reason != "" {
				e.Reason = reason
				e.Releases = p.other[e.Key]
				rep.Kept = append(rep.Kept, e)
				continue
			}
			log.Info("prune: deleted object", "release", release, "key", e.Key, "size", e.Size, "generations", e.Generations)
		}
		rep.Deleted = append(rep.Deleted, e)
	}
	if o.Delete && len(rep.Deleted) > 0 {
		// The window between a recheck and its delete: a manifest stored
		// there cannot be kept from losing the object, but it is reported.
		if err := p.refresh(ctx, st); err != nil {
			return rep, unavailable("manifest store", err)
		}
		for _, e := range rep.Deleted {
			if _, ok := p.kept[e.Key]; ok || len(p.other[e.Key]) > 0 {
				log.Error("prune: deleted an object that a manifest stored meanwhile lists; upload it again", "key", e.Key)
				return rep, &verdict.MismatchError{Subject: "asset " + e.Key, Got: "deleted by this prune", Want: "the asset of a manifest stored while prune deleted it",
					Reason: "a publish landed between prune's last read of the store and its delete: upload the asset again"}
			}
		}
	}
	return rep, nil
}

// unavailable wraps a store error as unavailable, leaving option errors
// (exit 2) as they are.
func unavailable(dep string, err error) error {
	var oe *verdict.OptionError
	if errors.As(err, &oe) {
		return err
	}
	return verdict.Unavailable(dep, err)
}

// cannotKnow is the refusal when what the store keeps cannot be known.
func cannotKnow(format string, args ...any) error {
	return verdict.Unavailable("manifest store", fmt.Errorf(format+": what to keep cannot be known, so nothing is pruned", args...))
}

// load reads the whole store: release's generations with GC's rules (and
// OlderThan's) applied, and every manifest of every other release. It
// refuses (see Run) whatever leaves what must be kept unknown.
func load(ctx context.Context, st manifest.Store, release string, o Options, start time.Time) (*plan, []store.Retained, error) {
	rels, err := st.Releases(ctx)
	if err != nil {
		return nil, nil, unavailable("manifest store", err)
	}
	if len(rels) == 0 {
		return nil, nil, cannotKnow("%s holds no release (it is empty, or not there)", storeName(st))
	}
	if !slices.Contains(rels, release) {
		return nil, nil, &verdict.OptionError{Option: "Release", Reason: fmt.Sprintf("%s holds no release %q (it holds %s)", storeName(st), release, names(rels))}
	}
	rs, unread, err := store.Retain(ctx, st, release, o.GCOptions)
	if err != nil {
		return nil, nil, unavailable("manifest store", err)
	}
	if len(unread) > 0 {
		return nil, nil, cannotKnow("manifest %s of %s: %v", unread[0].Digest, release, unread[0].Err)
	}
	if len(rs) == 0 {
		return nil, nil, cannotKnow("release %s has no manifest in %s", release, storeName(st))
	}
	p := newPlan(release)
	for i := range rs {
		r := &rs[i]
		if r.Reason == "" && o.OlderThan > 0 && start.Sub(r.Manifest.Release.CreatedAt) < o.OlderThan {
			r.Reason = KeptYoung
		}
		p.add(r)
	}
	ps, err := store.Pointers(ctx, st, release)
	if err != nil {
		return nil, nil, unavailable("manifest store", err)
	}
	if len(ps) == 0 {
		return nil, nil, cannotKnow("release %s has no channel, so which generation is live", release)
	}
	var chans []string
	for _, ptr := range ps {
		chans = append(chans, ptr.Channel)
	}
	for _, c := range o.Channels {
		if !slices.Contains(chans, c) {
			return nil, nil, &verdict.OptionError{Option: "Channels", Reason: fmt.Sprintf("release %s has no channel %q (it has %s)", release, c, names(chans))}
		}
	}
	for _, r := range rels {
		if r == release {
			continue
		}
		if err := p.refreshRelease(ctx, st, r); err != nil {
			return nil, nil, cannotKnow("%v", err)
		}
		ps, err := store.Pointers(ctx, st, r)
		if err != nil {
			return nil, nil, unavailable("manifest store", err)
		}
		if err := p.live(ctx, st, r, ps); err != nil {
			return nil, nil, err
		}
	}
	// Last: a publish meanwhile has stored what the pointers name.
	if err := p.live(ctx, st, release, ps); err != nil {
		return nil, nil, err
	}
	return p, rs, nil
}

// live checks that every channel of release names a manifest the plan
// holds, reading one stored meanwhile; a channel naming a manifest that
// is not in the store (the live plan deleted) is a refusal.
func (p *plan) live(ctx context.Context, st manifest.Store, release string, ps []*manifest.Pointer) error {
	for _, ptr := range ps {
		if p.seen[release][ptr.Digest] {
			continue
		}
		if err := p.refreshRelease(ctx, st, release); err != nil {
			return cannotKnow("%v", err)
		}
		if !p.seen[release][ptr.Digest] {
			return cannotKnow("channel %s of %s names manifest %s, which is not in the store", ptr.Channel, release, ptr.Digest)
		}
	}
	return nil
}

func storeName(st manifest.Store) string {
	if s, ok := st.(fmt.Stringer); ok {
		return s.String()
	}
	return "the store"
}

// names lists names for a message, at most ten.
func names(ns []string) string {
	if len(ns) == 0 {
		return "none"
	}
	if len(ns) > 10 {
		return strings.Join(ns[:10], ", ") + fmt.Sprintf(" and %d more", len(ns)-10)
	}
	return strings.Join(ns, ", ")
}

// use is who lists one asset path: the generations, and the sizes they
// recorded.
type use struct {
	gens  []int64
	sizes []int64
}

// plan is the asset paths of the release's kept generations and of its
// others, and those of every manifest of the other releases.
type plan struct {
	release    string
	kept, free map[string]*use
	// other is, per path, the other releases whose manifests list it.
	other map[string][]string
	// seen are the manifests read, per release; byKey the free ones
	// listing a path.
	seen  map[string]map[manifest.Digest]bool
	byKey map[string][]*store.Retained
}

func newPlan(release string) *plan {
	return &plan{release: release, kept: map[string]*use{}, free: map[string]*use{}, other: map[string][]string{},
		seen: map[string]map[manifest.Digest]bool{}, byKey: map[string][]*store.Retained{}}
}

func (p *plan) saw(release string, d manifest.Digest) {
	if p.seen[release] == nil {
		p.seen[release] = map[manifest.Digest]bool{}
	}
	p.seen[release][d] = true
}

func (p *plan) add(r *store.Retained) {
	p.saw(p.release, r.Digest)
	for _, f := range r.Manifest.Assets.Files {
		m := p.free
		if r.Reason != "" {
			m = p.kept
		} else {
			p.byKey[f.Path] = append(p.byKey[f.Path], r)
		}
		u := m[f.Path]
		if u == nil {
			u = &use{}
			m[f.Path] = u
		}
		if !slices.Contains(u.gens, r.Generation) {
			u.gens = append(u.gens, r.Generation)
		}
		if !slices.Contains(u.sizes, f.Size) {
			u.sizes = append(u.sizes, f.Size)
		}
	}
}

// refreshRelease reads the manifests of release that the plan has not
// seen: one of the pruned release is kept (KeptNewer, stored while prune
// ran), one of another release keeps every path it lists. A manifest that
// cannot be read is an error: what it lists cannot be known.
func (p *plan) refreshRelease(ctx context.Context, st manifest.Store, release string) error {
	ds, err := st.List(ctx, release)
	if err != nil {
		return fmt.Errorf("listing manifests of %s: %w", release, err)
	}
	for _, d := range ds {
		if p.seen[release][d] {
			continue
		}
		s, err := st.Get(ctx, release, d)
		if errors.Is(err, manifest.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("manifest %s of %s: %w", d, release, err)
		}
		if release == p.release {
			p.add(&store.Retained{Digest: d, Generation: s.Manifest.Release.Generation, Manifest: s.Manifest, Reason: KeptNewer})
			continue
		}
		p.saw(release, d)
		for _, f := range s.Manifest.Assets.Files {
			if !slices.Contains(p.other[f.Path], release) {
				p.other[f.Path] = append(p.other[f.Path], release)
			}
		}
	}
	return nil
}

// refresh reads every release of the store again (a release created
// while prune ran among them) for manifests stored meanwhile.
func (p *plan) refresh(ctx context.Context, st manifest.Store) error {
	rels, err := st.Releases(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(rels, p.release) {
		rels = append(rels, p.release)
	}
	for _, r := range rels {
		if err := p.refreshRelease(ctx, st, r); err != nil {
			return err
		}
	}
	return nil
}

// recheck decides again, immediately before key is deleted: a manifest
// of any release stored since the plan was made (a concurrent publish)
// keeps every path it lists, and a free generation listing key that a
// channel has moved to (store.Recheck) keeps it. It says why key is kept
// now, or "".
func (p *plan) recheck(ctx context.Context, st manifest.Store, key string) (string, error) {
	if err := p.refresh(ctx, st); err != nil {
		return "", err
	}
	if _, ok := p.kept[key]; ok {
		return KeptNewer, nil
	}
	if len(p.other[key]) > 0 {
		return KeptOther, nil
	}
	for _, r := range p.byKey[key] {
		reason, err := store.Recheck(ctx, st, p.release, r.Digest, r.Generation)
		if err != nil {
			return "", err
		}
		if reason != "" {
			return KeptRaced, nil
		}
	}
	return "", nil
}
