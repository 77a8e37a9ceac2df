package manifest

import (
	"slices"
	"sort"
	"time"
)

// The kinds of Problem, stable in JSON.
const (
	// ProblemGenerationNotRising: the new manifest's generation is not
	// above the old one's, so no store or consumer would take it.
	ProblemGenerationNotRising = "generation-not-rising"
	// ProblemReleaseRenamed: the manifests are of two different releases.
	ProblemReleaseRenamed = "release-renamed"
	// ProblemTagMoved: an image has the same repository and tag in both
	// manifests but another digest: the tag was re-pushed (the Epic 2021
	// outage's cause).
	ProblemTagMoved = "tag-moved"
)

// The kinds of change of an image or a file, stable in JSON.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Changes is what differs from one manifest of a release to the next, and
// why the new one may not follow the old.
type Changes struct {
	Old Side `json:"old"`
	New Side `json:"new"`
	// Images lists the images added, removed or changed, by name.
	Images []ImageChange `json:"images"`
	Assets AssetChanges  `json:"assets"`
	// Problems says why New cannot follow Old; empty when it can.
	Problems []Problem `json:"problems"`
}

// Side identifies one of the two manifests.
type Side struct {
	Release    string    `json:"release"`
	Generation int64     `json:"generation"`
	Digest     Digest    `json:"digest,omitzero"`
	CreatedAt  time.Time `json:"createdAt"`
}

// ImageChange is one image that differs.
type ImageChange struct {
	Name string `json:"name"`
	// Change is Added, Removed or Changed.
	Change    string `json:"change"`
	OldRef    string `json:"oldRef,omitempty"`
	NewRef    string `json:"newRef,omitempty"`
	OldDigest Digest `json:"oldDigest,omitzero"`
	NewDigest Digest `json:"newDigest,omitzero"`
	// TagMoved is set when the repository and tag are the same and the
	// digest is not.
	TagMoved bool `json:"tagMoved,omitempty"`
}

// AssetChanges is how the asset sets differ.
type AssetChanges struct {
	Added   []File       `json:"added"`
	Removed []File       `json:"removed"`
	Changed []FileChange `json:"changed"`
	// Unchanged counts the files that are the same in both.
	Unchanged      int    `json:"unchanged"`
	OldFingerprint Digest `json:"oldFingerprint,omitzero"`
	NewFingerprint Digest `json:"newFingerprint,omitzero"`
	// CDNAdded and CDNRemoved are the CDN bases that differ.
	CDNAdded   []string `json:"cdnAdded"`
	CDNRemoved []string `json:"cdnRemoved"`
	// OldOrigin and NewOrigin are set when the origin changed.
	OldOrigin string `json:"oldOrigin,omitempty"`
	NewOrigin string `json:"newOrigin,omitempty"`
}

// FileChange is a file at the same path with other content.
type FileChange struct {
	Path string `json:"path"`
	Old  File   `json:"old"`
	New  File   `json:"new"`
}

// Problem is one reason the new manifest cannot follow the old.
type Problem struct {
	// Kind is one of the Problem constants.
	Kind string `json:"kind"`
	// Subject is the image name for ProblemTagMoved, else the release.
	Subject string `json:"subject"`
	Message string `json:"message"`
}

// Diff compares two manifests of a release, old before new. Neither is
// modified.
func Diff(old, new *Manifest) *Changes {
	c := &Changes{Old: side(old), New: side(new), Images: []ImageChange{}, Problems: []Problem{}}
	if old.Release.Name != new.Release.Name {
		c.Problems = append(c.Problems, Problem{Kind: ProblemReleaseRenamed, Subject: new.Release.Name,
			Message: "the manifests are of different releases: " + old.Release.Name + " and " + new.Release.Name})
	} else if new.Release.Generation <= old.Release.Generation {
		c.Problems = append(c.Problems, Problem{Kind: ProblemGenerationNotRising, Subject: new.Release.Name,
			Message: "generation " + itoa(new.Release.Generation) + " does not rise above generation " + itoa(old.Release.Generation)})
	}
	c.Images = diffImages(old.Images, new.Images)
	for _, ic := range c.Images {
		if ic.TagMoved {
			c.Problems = append(c.Problems, Problem{Kind: ProblemTagMoved, Subject: ic.Name,
				Message: "tag " + ic.NewRef + " moved from " + ic.OldDigest.String() + " to " + ic.NewDigest.String()})
		}
	}
	c.Assets = diffAssets(old.Assets, new.Assets)
	return c
}

func side(m *Manifest) Side {
	s := Side{Release: m.Release.Name, Generation: m.Release.Generation, CreatedAt: m.Release.CreatedAt}
	if d, err := m.Digest(); err == nil {
		s.Digest = d
	}
	return s
}

func diffImages(old, new []Image) []ImageChange {
	byName := map[string]*Image{}
	for i := range old {
		byName[old[i].Name] = &old[i]
	}
	out := []ImageChange{}
	seen := map[string]bool{}
	for _, n := range new {
		seen[n.Name] = true
		o, ok := byName[n.Name]
		switch {
		case !ok:
			out = append(out, ImageChange{Name: n.Name, Change: Added, NewRef: n.Ref, NewDigest: n.Digest})
		case o.Digest != n.Digest:
			out = append(out, ImageChange{Name: n.Name, Change: Changed, OldRef: o.Ref, NewRef: n.Ref, OldDigest: o.Digest, NewDigest: n.Digest,
				TagMoved: n.Tag != "" && o.Tag == n.Tag && o.Repository == n.Repository})
		}
	}
	for _, o := range old {
		if !seen[o.Name] {
			out = append(out, ImageChange{Name: o.Name, Change: Removed, OldRef: o.Ref, OldDigest: o.Digest})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func diffAssets(old, new Assets) AssetChanges {
	a := AssetChanges{Added: []File{}, Removed: []File{}, Changed: []FileChange{},
		OldFingerprint: old.Fingerprint, NewFingerprint: new.Fingerprint}
	of, nf := sortedFiles(old.Files), sortedFiles(new.Files)
	i, j := 0, 0
	for i < len(of) || j < len(nf) {
		switch {
		case j == len(nf) || i < len(of) && of[i].Path < nf[j].Path:
			a.Removed = append(a.Removed, of[i])
			i++
		case i == len(of) || nf[j].Path < of[i].Path:
			a.Added = append(a.Added, nf[j])
			j++
		default:
			if of[i].SHA256 != nf[j].SHA256 || of[i].Size != nf[j].Size || of[i].ContentType != nf[j].ContentType {
				a.Changed = append(a.Changed, FileChange{Path: of[i].Path, Old: of[i], New: nf[j]})
			} else {
				a.Unchanged++
			}
			i++
			j++
		}
	}
	a.CDNAdded, a.CDNRemoved = setDiff(new.CDN, old.CDN), setDiff(old.CDN, new.CDN)
	if old.Origin != new.Origin {
		a.OldOrigin, a.NewOrigin = old.Origin, new.Origin
	}
	return a
}

func sortedFiles(files []File) []File {
	out := slices.Clone(files)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// setDiff returns the elements of a not in b, in a's order.
func setDiff(a, b []string) []string {
	out := []string{}
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// Differs reports whether what the release runs or serves changed: an
// image, a file, a CDN base or the origin. A new generation or creation
// time alone is no difference.
func (c *Changes) Differs() bool {
	a := c.Assets
	return len(c.Images) > 0 || len(a.Added) > 0 || len(a.Removed) > 0 || len(a.Changed) > 0 ||
		len(a.CDNAdded) > 0 || len(a.CDNRemoved) > 0 || a.OldOrigin != a.NewOrigin
}

// Refusals returns the Problems that refuse the new manifest, leaving out
// a moved tag of an image named in allowMovedTag (accepted on purpose).
func (c *Changes) Refusals(allowMovedTag ...string) []Problem {
	out := []Problem{}
	for _, p := range c.Problems {
		if p.Kind == ProblemTagMoved && slices.Contains(allowMovedTag, p.Subject) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Bytes returns the total size of files.
func Bytes(files []File) int64 {
	var n int64
	for _, f := range files {
		n += f.Size
	}
	return n
}
