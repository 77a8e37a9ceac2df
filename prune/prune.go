package prune

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
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
	// PruneUnknown deletes objects that no manifest of the release lists
	// (default: kept).
	PruneUnknown bool
	// Now is the clock of OlderThan (default time.Now).
	Now func() time.Time
}

// The reasons an object is kept.
const (
	KeptListed    = "a kept generation lists it"
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
// object no manifest lists).
type Entry struct {
	Key         string  `json:"key"`
	Size        int64   `json:"size"`
	Generations []int64 `json:"generations,omitempty"`
	Reason      string  `json:"reason,omitempty"`
}

// Run prunes origin of the assets of release's generations that are not
// kept. It returns a *verdict.OptionError for bad options; a
// *verdict.UnavailableError when the store or the origin cannot be read,
// or a manifest of the release cannot (what it lists cannot be known);
// and a *verdict.MismatchError, deleting nothing, when an asset of a kept
// generation is missing from the origin (the skew prune guards against
// is already there, or the origin is not the CDN's). A failure while
// deleting returns the report so far with the error.
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
	rs, unread, err := store.Retain(ctx, st, release, o.GCOptions)
	if err != nil {
		return nil, unavailable("manifest store", err)
	}
	if len(unread) > 0 {
		return nil, verdict.Unavailable("manifest store", fmt.Errorf("manifest %s of %s: %w: what it lists cannot be known, so nothing is pruned", unread[0].Digest, release, unread[0].Err))
	}
	start := now()
	rep := &Report{Release: release, DryRun: !o.Delete, Generations: []store.GCEntry{}, Deleted: []Entry{}, Kept: []Entry{}, Missing: []Entry{}}
	p := newPlan()
	for i := range rs {
		r := &rs[i]
		if r.Reason == "" && o.OlderThan > 0 && start.Sub(r.Manifest.Release.CreatedAt) < o.OlderThan {
			r.Reason = KeptYoung
		}
		p.add(r)
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
	type candidate struct {
		ob    Object
		entry Entry
	}
	var cands []candidate
	for _, ob := range objs {
		e := Entry{Key: ob.Key, Size: ob.Size}
		if ob.Irregular {
			e.Reason = KeptIrregular
		}
		if u, ok := p.kept[ob.Key]; ok {
			e.Generations = u.gens
			if e.Reason == "" {
				e.Reason = KeptListed
			}
		} else if u, ok := p.free[ob.Key]; ok {
			e.Generations = u.gens
			if e.Reason == "" && !slices.Contains(u.sizes, ob.Size) {
				e.Reason = KeptOtherSize
			}
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
			reason, err := p.recheck(ctx, st, release, c.ob.Key)
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
				rep.Kept = append(rep.Kept, e)
				continue
			}
			log.Info("prune: deleted object", "release", release, "key", e.Key, "size", e.Size, "generations", e.Generations)
		}
		rep.Deleted = append(rep.Deleted, e)
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

// use is who lists one asset path: the generations, and the sizes they
// recorded.
type use struct {
	gens  []int64
	sizes []int64
}

// plan is the asset paths of the kept generations and of the others.
type plan struct {
	kept, free map[string]*use
	// seen are the manifests read; byKey the free ones listing a path.
	seen  map[manifest.Digest]bool
	byKey map[string][]*store.Retained
}

func newPlan() *plan {
	return &plan{kept: map[string]*use{}, free: map[string]*use{}, seen: map[manifest.Digest]bool{}, byKey: map[string][]*store.Retained{}}
}

func (p *plan) add(r *store.Retained) {
	p.seen[r.Digest] = true
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

// recheck decides again, immediately before key is deleted: a manifest
// stored since the plan was made (a concurrent publish) keeps every path
// it lists, and a free generation listing key that a channel has moved to
// (store.Recheck) keeps it. It says why key is kept now, or "".
func (p *plan) recheck(ctx context.Context, st manifest.Store, release, key string) (string, error) {
	ds, err := st.List(ctx, release)
	if err != nil {
		return "", fmt.Errorf("listing manifests of %s: %w", release, err)
	}
	for _, d := range ds {
		if p.seen[d] {
			continue
		}
		s, err := st.Get(ctx, release, d)
		if errors.Is(err, manifest.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("reading manifest %s stored while prune ran: %w", d, err)
		}
		p.add(&store.Retained{Digest: d, Generation: s.Manifest.Release.Generation, Manifest: s.Manifest, Reason: KeptNewer})
	}
	if _, ok := p.kept[key]; ok {
		return KeptNewer, nil
	}
	for _, r := range p.byKey[key] {
		reason, err := store.Recheck(ctx, st, release, r.Digest, r.Generation)
		if err != nil {
			return "", err
		}
		if reason != "" {
			return KeptRaced, nil
		}
	}
	return "", nil
}
