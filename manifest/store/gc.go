package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// GCOptions says what GC may take.
type GCOptions struct {
	// Keep is how many of the newest manifests, by generation, to keep in
	// any case (0: only the other rules keep anything).
	Keep int
	// InUse lists digests that a fleet report says are running: never
	// deleted.
	InUse []manifest.Digest
	// Running is what the instances actually run (ParseRunning): a
	// manifest naming one of its image digests, or of one of the
	// release's generations in it, is never deleted.
	Running Running
	// Delete deletes; without it GC is a dry run that reports what it
	// would delete.
	Delete bool
	// Logger logs each delete at Info (default: none).
	Logger *slog.Logger
}

// AddReport adds what a fleet report says is in use to o: its manifest
// digests to InUse (ParseInUse) and what its instances run to Running
// (ParseRunning). A JSON list of manifest digests is a report too. A
// document that is neither is a *verdict.OptionError (of InUse or
// Running), and o is left as it was.
func (o *GCOptions) AddReport(data []byte) error {
	ds, err := ParseInUse(data)
	if err != nil {
		return err
	}
	r, err := ParseRunning(data)
	if err != nil {
		return err
	}
	o.InUse = append(o.InUse, ds...)
	o.Running.Images = append(o.Running.Images, r.Images...)
	if o.Running.Generations == nil {
		o.Running.Generations = map[string][]int64{}
	}
	for rel, gens := range r.Generations {
		o.Running.Generations[rel] = append(o.Running.Generations[rel], gens...)
	}
	return nil
}

// GCReport is what GC found and did. Its JSON shape is documented in
// docs/stores.md (Commands).
type GCReport struct {
	Release string `json:"release"`
	DryRun  bool   `json:"dryRun"`
	// Deleted lists what was deleted, or in a dry run what would be.
	Deleted []GCEntry `json:"deleted"`
	Kept    []GCEntry `json:"kept"`
}

// GCEntry is one manifest and, when kept, why.
type GCEntry struct {
	Digest     manifest.Digest `json:"digest"`
	Generation int64           `json:"generation"`
	Reason     string          `json:"reason,omitempty"`
}

// The reasons a manifest is kept.
const (
	KeptLive    = "a channel names it"
	KeptNewest  = "one of the newest"
	KeptInUse   = "running in the fleet"
	KeptImage   = "an instance runs one of its images"
	KeptRunGen  = "an instance runs its generation"
	KeptRisable = "a channel could still move to it"
	KeptNoRead  = "unreadable; left for an operator"
	KeptRaced   = "a channel moved while gc ran"
)

// GC deletes a release's old manifests. It never deletes one that a
// channel names, one of the Keep newest by generation, one in InUse, nor
// one whose generation is not below every channel's current generation
// (so a release without channels loses nothing); an unreadable manifest
// is kept and reported. Immediately before each delete it re-reads every
// channel and decides again. A damaged pointer stops it: what is live
// cannot be known.
func GC(ctx context.Context, st manifest.Store, release string, o GCOptions) (*GCReport, error) {
	log := logger(o.Logger)
	if sw, ok := st.(sweeper); ok && o.Delete {
		if _, err := sw.Sweep(ctx, release); err != nil {
			return nil, fmt.Errorf("sweeping temporary files of %s: %w", release, err)
		}
	}
	rs, unread, err := Retain(ctx, st, release, o)
	if err != nil {
		return nil, err
	}
	rep := &GCReport{Release: release, DryRun: !o.Delete, Deleted: []GCEntry{}, Kept: []GCEntry{}}
	for _, u := range unread {
		log.Warn("gc: unreadable manifest kept", "digest", u.Digest, "err", u.Err)
		rep.Kept = append(rep.Kept, GCEntry{Digest: u.Digest, Reason: KeptNoRead})
	}
	// Oldest first, so that an interrupted gc has taken the least useful.
	for i := len(rs) - 1; i >= 0; i-- {
		e := rs[i]
		entry := GCEntry{Digest: e.Digest, Generation: e.Generation}
		reason := e.Reason
		if reason == "" && o.Delete {
			// Decide again on what the channels say now.
			if reason, err = Recheck(ctx, st, release, e.Digest, e.Generation); err != nil {
				return rep, err
			}
		}
		if reason != "" {
			entry.Reason = reason
			rep.Kept = append(rep.Kept, entry)
			continue
		}
		if o.Delete {
			if err := st.Delete(ctx, release, e.Digest); err != nil {
				return rep, fmt.Errorf("deleting %s: %w", e.Digest, err)
			}
			log.Info("gc: deleted manifest", "release", release, "digest", e.Digest, "generation", e.Generation)
		}
		rep.Deleted = append(rep.Deleted, entry)
	}
	return rep, nil
}

// sweeper is a store that leaves temporary files behind a killed writer
// and can remove them (filestore); GC calls it when it deletes.
type sweeper interface {
	Sweep(ctx context.Context, release string) ([]string, error)
}

// Retained is one readable manifest of a release and why GC's rules keep
// it.
type Retained struct {
	Digest     manifest.Digest
	Generation int64
	Manifest   *manifest.Manifest
	// Reason is why the manifest is kept (KeptLive, KeptNewest, ...), or ""
	// when no rule keeps it.
	Reason string
}

// Unreadable is a stored manifest that could not be read, and why.
type Unreadable struct {
	Digest manifest.Digest
	Err    error
}

// Retain applies GC's rules (o's Keep, InUse and Running; Delete and
// Logger aside) to a release as the store holds it now: every readable
// manifest, newest first (by generation, then creation time, then
// digest), each with the reason it is kept or "", and the manifests that
// could not be read. A manifest deleted while it runs is
// left out. It deletes nothing: GC and cdn prune (package prune) decide
// on it, calling Recheck before each delete. A damaged channel pointer is
// an error: what is live cannot be known.
func Retain(ctx context.Context, st manifest.Store, release string, o GCOptions) ([]Retained, []Unreadable, error) {
	if o.Keep < 0 {
		return nil, nil, &verdict.OptionError{Option: "Keep", Reason: "must not be negative"}
	}
	ds, err := st.List(ctx, release)
	if err != nil {
		return nil, nil, fmt.Errorf("listing manifests of %s: %w", release, err)
	}
	var all []Retained
	var unread []Unreadable
	for _, d := range ds {
		s, err := st.Get(ctx, release, d)
		if errors.Is(err, manifest.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			unread = append(unread, Unreadable{Digest: d, Err: err})
			continue
		}
		all = append(all, Retained{Digest: d, Generation: s.Manifest.Release.Generation, Manifest: s.Manifest})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Generation != all[j].Generation {
			return all[i].Generation > all[j].Generation
		}
		if !all[i].Manifest.Release.CreatedAt.Equal(all[j].Manifest.Release.CreatedAt) {
			return all[i].Manifest.Release.CreatedAt.After(all[j].Manifest.Release.CreatedAt)
		}
		return all[i].Digest.String() < all[j].Digest.String()
	})
	inUse := map[manifest.Digest]bool{}
	for _, d := range o.InUse {
		inUse[d] = true
	}
	held := func(m *manifest.Manifest, d manifest.Digest) string {
		switch {
		case inUse[d]:
			return KeptInUse
		case o.Running.names(m):
			return KeptImage
		case slices.Contains(o.Running.Generations[release], m.Release.Generation):
			return KeptRunGen
		}
		return ""
	}
	live, floor, err := liveSet(ctx, st, release)
	if err != nil {
		return nil, nil, err
	}
	for i := range all {
		all[i].Reason = keepReason(i < o.Keep, held(all[i].Manifest, all[i].Digest), live, floor, all[i].Digest, all[i].Generation)
	}
	return all, unread, nil
}

// Recheck re-reads every channel of release immediately before a delete
// and says whether the manifest d of generation gen, which Retain found
// free, is held now: KeptRaced when a channel moved to it or below it
// while the caller ran, "" when it may still go.
func Recheck(ctx context.Context, st manifest.Store, release string, d manifest.Digest, gen int64) (string, error) {
	live, floor, err := liveSet(ctx, st, release)
	if err != nil {
		return "", err
	}
	if keepReason(false, "", live, floor, d, gen) != "" {
		return KeptRaced, nil
	}
	return "", nil
}

// keepReason says why a manifest is kept, or "" to delete it; held is
// why the fleet holds it (KeptInUse, KeptImage, KeptRunGen), or "".
func keepReason(newest bool, held string, live map[manifest.Digest]bool, floor int64, d manifest.Digest, gen int64) string {
	switch {
	case live[d]:
		return KeptLive
	case newest:
		return KeptNewest
	case held != "":
		return held
	case gen >= floor:
		return KeptRisable
	}
	return ""
}

// liveSet reads every channel of release: the digests they name, and the
// lowest generation among them (math.MinInt64 when there is no channel:
// then every manifest could still be named by a new one).
func liveSet(ctx context.Context, st manifest.Store, release string) (map[manifest.Digest]bool, int64, error) {
	ps, err := channelPointers(ctx, st, release)
	if err != nil {
		return nil, 0, err
	}
	live := map[manifest.Digest]bool{}
	floor := int64(math.MaxInt64)
	for _, p := range ps {
		live[p.Digest] = true
		floor = min(floor, p.Generation)
	}
	if len(live) == 0 {
		floor = math.MinInt64
	}
	return live, floor, nil
}

// ParseInUse reads the digests a fleet report says are running: every
// string value of a "manifestDigest" key anywhere in a JSON document, or,
// for a document that is a JSON list of strings, each of them. Any other
// shape, or a value that is not a digest, is a *verdict.OptionError of
// InUse.
func ParseInUse(data []byte) ([]manifest.Digest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &verdict.OptionError{Option: "InUse", Reason: "not JSON: " + err.Error(), Err: err}
	}
	var out []manifest.Digest
	add := func(s string) error {
		d, err := manifest.ParseDigest(s)
		if err != nil {
			return &verdict.OptionError{Option: "InUse", Reason: err.Error(), Err: err}
		}
		out = append(out, d)
		return nil
	}
	if list, ok := v.([]any); ok && allStrings(list) {
		for _, s := range list {
			if err := add(s.(string)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var walk func(any) error
	walk = func(v any) error {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				if s, ok := x.(string); ok && k == "manifestDigest" {
					if s == "" {
						continue
					}
					if err := add(s); err != nil {
						return err
					}
					continue
				}
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range t {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &verdict.OptionError{Option: "InUse", Reason: `no "manifestDigest" value and not a list of digests: is this a fleet report?`}
	}
	return out, nil
}

// Running is what instances actually run, read from a fleet report by
// ParseRunning: the image digests seen running, and per release the
// generations their agents admitted.
type Running struct {
	Images      []manifest.Digest
	Generations map[string][]int64
}

// names reports whether m names one of r's images: an image's index or
// manifest digest, a platform's manifest digest or its config digest (the
// image ID a runtime reports).
func (r Running) names(m *manifest.Manifest) bool {
	for _, im := range m.Images {
		if slices.Contains(r.Images, im.Digest) {
			return true
		}
		for _, p := range im.Platforms {
			if slices.Contains(r.Images, p.Digest) || slices.Contains(r.Images, p.Config) {
				return true
			}
		}
	}
	return false
}

// ParseRunning reads what a fleet report says instances actually run,
// beyond the manifests they are checked against (ParseInUse): every
// "running" digest and "imageDigests" list, and the "generation" of every
// object that also names its "release" (the top-level "manifest", what the
// fleet is checked against, aside). A document with none of them (a list
// of digests) gives an empty Running; a value that is not a digest is a
// *verdict.OptionError of Running.
func ParseRunning(data []byte) (Running, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Running{}, &verdict.OptionError{Option: "Running", Reason: "not JSON: " + err.Error(), Err: err}
	}
	r := Running{Generations: map[string][]int64{}}
	add := func(s string) error {
		if s == "" {
			return nil
		}
		d, err := manifest.ParseDigest(s)
		if err != nil {
			return &verdict.OptionError{Option: "Running", Reason: err.Error(), Err: err}
		}
		if !slices.Contains(r.Images, d) {
			r.Images = append(r.Images, d)
		}
		return nil
	}
	var walk func(v any, top bool) error
	walk = func(v any, top bool) error {
		switch t := v.(type) {
		case map[string]any:
			rel, _ := t["release"].(string)
			if n, ok := t["generation"].(json.Number); ok && rel != "" {
				if g, err := n.Int64(); err == nil && !slices.Contains(r.Generations[rel], g) {
					r.Generations[rel] = append(r.Generations[rel], g)
				}
			}
			for k, x := range t {
				switch {
				case k == "manifest" && top:
					continue
				case k == "running":
					if s, ok := x.(string); ok {
						if err := add(s); err != nil {
							return err
						}
						continue
					}
				case k == "imageDigests":
					if list, ok := x.([]any); ok && allStrings(list) {
						for _, s := range list {
							if err := add(s.(string)); err != nil {
								return err
							}
						}
						continue
					}
				}
				if err := walk(x, false); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range t {
				if err := walk(x, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(v, true); err != nil {
		return Running{}, err
	}
	return r, nil
}

func allStrings(list []any) bool {
	for _, x := range list {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return len(list) > 0
}
