package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/lockstep-dev/lockstep/manifest"
)

// reference is a parsed image reference: a repository, a tag (given or the
// default "latest") and, if pinned, a digest.
type reference struct {
	given string
	// base is given without "@digest": the spelling kept in pinned forms.
	base     string
	repo     name.Repository
	tag      string
	explicit bool // the tag was written, not defaulted
	digest   manifest.Digest
}

// parseReference parses s as "repo[:tag][@sha256:hex]", with Docker Hub
// normalisation ("nginx" is index.docker.io/library/nginx:latest).
func parseReference(s string) (reference, error) {
	r := reference{given: s, base: s}
	if strings.TrimSpace(s) != s || s == "" {
		return r, &ReferenceError{Ref: s, Err: errors.New("empty, or surrounded by space")}
	}
	if base, dig, ok := strings.Cut(s, "@"); ok {
		d, err := manifest.ParseDigest(dig)
		if err != nil {
			return r, &ReferenceError{Ref: s, Err: err}
		}
		if d.Algorithm != "sha256" {
			return r, &ReferenceError{Ref: s, Err: fmt.Errorf("digest algorithm %s: registries address manifests by sha256", d.Algorithm)}
		}
		if _, err := name.NewDigest(s); err != nil {
			return r, &ReferenceError{Ref: s, Err: err}
		}
		r.base, r.digest = base, d
	}
	last := r.base[strings.LastIndex(r.base, "/")+1:]
	r.explicit = strings.Contains(last, ":")
	t, err := name.NewTag(r.base)
	if err != nil {
		return r, &ReferenceError{Ref: s, Err: err}
	}
	r.repo, r.tag = t.Repository, t.TagStr()
	if !r.explicit && r.digest.IsZero() {
		r.explicit = true // "nginx" means nginx:latest
	}
	return r, nil
}

// hasTag reports whether the reference names a tag to resolve: one written,
// or the default "latest" of a reference without a digest.
func (r reference) hasTag() bool { return r.explicit }

// pinned returns the pinned form of the reference: the given spelling of the
// repository, the tag (when there is one) and d.
func (r reference) pinned(d manifest.Digest) string {
	base := r.base
	if r.hasTag() {
		last := base[strings.LastIndex(base, "/")+1:]
		if !strings.Contains(last, ":") {
			base += ":" + r.tag
		}
	}
	return base + "@" + d.String()
}

// Pinned returns the pinned form of an image, "repo:tag@sha256:…", keeping
// the spelling of the repository in im.Ref (so "nginx:1.27" gives
// "nginx:1.27@sha256:…"). An image whose Ref does not parse gives
// Repository[:Tag]@Digest.
func Pinned(im manifest.Image) string {
	r, err := parseReference(im.Ref)
	if err != nil {
		s := im.Repository
		if im.Tag != "" {
			s += ":" + im.Tag
		}
		return s + "@" + im.Digest.String()
	}
	return r.pinned(im.Digest)
}

// TagKey returns the normalised "repository:tag" a reference names, and
// false when it does not parse or names no tag. Two references with the
// same key name the same tag.
func TagKey(ref string) (string, bool) {
	r, err := parseReference(ref)
	if err != nil || !r.hasTag() {
		return "", false
	}
	return r.repo.Name() + ":" + r.tag, true
}

// TagOf returns ref without its digest ("app:v1@sha256:…" gives
// "app:v1"), and false when ref does not parse or names no tag.
func TagOf(ref string) (string, bool) {
	r, err := parseReference(ref)
	if err != nil || !r.hasTag() {
		return "", false
	}
	return r.base, true
}

// parsePlatform checks "os/arch[/variant]".
func parsePlatform(s string) error {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return fmt.Errorf("platform %q: want os/arch[/variant]", s)
	}
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t:") {
			return fmt.Errorf("platform %q: want os/arch[/variant]", s)
		}
	}
	return nil
}

// Replacer returns a function for rewriting files: a reference naming the
// same repository and tag as one of images (after Docker Hub
// normalisation, with or without a digest already) becomes
// "its spelling:tag@digest" with that image's digest; any other reference,
// including one pinned by digest alone, is declined.
func Replacer(images []manifest.Image) func(ref string) (string, bool) {
	pins := map[string]manifest.Digest{}
	for _, im := range images {
		if im.Tag != "" {
			pins[im.Repository+":"+im.Tag] = im.Digest
		}
	}
	return func(s string) (string, bool) {
		r, err := parseReference(s)
		if err != nil || !r.hasTag() {
			return "", false
		}
		d, ok := pins[r.repo.Name()+":"+r.tag]
		if !ok {
			return "", false
		}
		return r.pinned(d), true
	}
}
