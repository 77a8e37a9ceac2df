package registry

import (
	"github.com/lockstep-dev/lockstep/internal/imagename"

	"errors"
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// MovedTag is a tag that now names other bytes than it did: the same
// repository and tag, another digest.
type MovedTag struct {
	// Name is the image's role; Ref its reference as given now.
	Name string `json:"name"`
	Ref  string `json:"ref"`
	// Repository (normalised) and Tag are what moved.
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
	// Previous is the digest the tag named before (in the previous
	// manifest, or in a "repo:tag@digest" reference); Current what it
	// names now.
	Previous manifest.Digest `json:"previous"`
	Current  manifest.Digest `json:"current"`
	// Allowed says that Options.AllowMoved accepted it.
	Allowed bool `json:"allowed"`
}

// Matches reports whether s names this moved tag: its role name, its
// reference as given, or the same repository:tag (after Docker Hub
// normalisation, so "nginx" matches "index.docker.io/library/nginx:latest").
func (m MovedTag) Matches(s string) bool {
	if s == m.Name || s == m.Ref {
		return true
	}
	k, ok := TagKey(s)
	return ok && k == m.Repository+":"+m.Tag
}

func (m MovedTag) allowedBy(allow []string) bool {
	for _, a := range allow {
		if m.Matches(a) {
			return true
		}
	}
	return false
}

func (m MovedTag) String() string {
	return fmt.Sprintf("%s (%s:%s) moved from %s to %s", m.Name, m.Repository, m.Tag, m.Previous, m.Current)
}

// Moved compares pinned images with a previous release manifest and
// returns every tag that now resolves to a different digest, in the order
// of pinned, each marked Allowed when an entry of allow matches it (see
// MovedTag.Matches). Images are matched by normalised repository and tag,
// not by role: a role that now uses another tag has not moved. Images
// without a tag, and a nil previous, give nothing.
func Moved(previous *manifest.Manifest, pinned []manifest.Image, allow []string) []MovedTag {
	if previous == nil {
		return nil
	}
	before := map[string]manifest.Digest{}
	for _, im := range previous.Images {
		if im.Tag == "" {
			continue
		}
		before[canonicalRepo(im.Repository)+":"+im.Tag] = im.Digest
	}
	var out []MovedTag
	seen := map[string]bool{}
	for _, im := range pinned {
		if im.Tag == "" {
			continue
		}
		key := canonicalRepo(im.Repository) + ":" + im.Tag
		prev, ok := before[key]
		if !ok || prev == im.Digest || seen[key+im.Name] {
			continue
		}
		seen[key+im.Name] = true
		m := MovedTag{Name: im.Name, Ref: im.Ref, Repository: im.Repository, Tag: im.Tag, Previous: prev, Current: im.Digest}
		m.Allowed = m.allowedBy(allow)
		out = append(out, m)
	}
	return out
}

// MovedTagError refuses moved tags. It unwraps to one *verdict.MismatchError
// per tag, so it is a mismatch (exit 1) wherever mismatches are.
type MovedTagError struct {
	Tags []MovedTag
}

func (e *MovedTagError) Error() string {
	parts := make([]string, len(e.Tags))
	for i, m := range e.Tags {
		parts[i] = m.String()
	}
	noun := "tag"
	if len(e.Tags) != 1 {
		noun = "tags"
	}
	return fmt.Sprintf("refusing %d moved %s (same tag, other bytes): %s",
		len(e.Tags), noun, strings.Join(parts, "; "))
}

// Unwrap returns one *verdict.MismatchError per moved tag.
func (e *MovedTagError) Unwrap() []error {
	out := make([]error, len(e.Tags))
	for i, m := range e.Tags {
		out[i] = &verdict.MismatchError{
			Subject: "image " + m.Name,
			Reason:  fmt.Sprintf("tag %s:%s moved", m.Repository, m.Tag),
			Got:     m.Current.String(),
			Want:    m.Previous.String(),
		}
	}
	return out
}

// previous is what the tags named before: opt.Previous's images and the
// pinned references of opt.Known; nil when there is neither.
func previous(opt Options) *manifest.Manifest {
	if opt.Previous == nil && len(opt.Known) == 0 {
		return nil
	}
	m := &manifest.Manifest{}
	if opt.Previous != nil {
		m.Images = append(m.Images, opt.Previous.Images...)
	}
	for _, k := range opt.Known {
		r, err := parseReference(k)
		if err != nil || !r.hasTag() || r.digest.IsZero() {
			continue
		}
		m.Images = append(m.Images, manifest.Image{Ref: k, Repository: r.repo.Name(), Tag: r.tag, Digest: r.digest})
	}
	return m
}

// refuse logs the allowed moved tags and refuses the others.
func (p *pinner) refuse(moved []MovedTag) error {
	var refused []MovedTag
	for _, m := range moved {
		if m.Allowed {
			p.log.Warn("tag moved, allowed", "image", m.Name, "tag", m.Repository+":"+m.Tag, "previous", m.Previous.String(), "current", m.Current.String())
			continue
		}
		refused = append(refused, m)
	}
	if len(refused) > 0 {
		return &MovedTagError{Tags: refused}
	}
	return nil
}

// IsMovedTag reports whether err is, or wraps, a *MovedTagError.
func IsMovedTag(err error) bool {
	var me *MovedTagError
	return errors.As(err, &me)
}

// canonicalRepo is repo as imagename normalises it (host case, trailing
// dot, default port, loopback spellings, Docker Hub), so that another
// spelling of the previous release's repository cannot hide a moved tag;
// repo itself when it does not parse.
func canonicalRepo(repo string) string {
	if r, err := (imagename.Names{}).Repository(repo); err == nil {
		return r
	}
	return repo
}
