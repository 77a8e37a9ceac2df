package webhook

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/imagename"
	"github.com/lockstep-dev/lockstep/manifest"
)

// Mode says what the webhook does with a finding.
type Mode string

// The modes.
const (
	// Enforce denies a request with a finding. The default.
	Enforce Mode = "enforce"
	// Warn admits it, returning the findings as AdmissionReview warnings,
	// and records them (log and metric).
	Warn Mode = "warn"
)

// ParseMode parses "enforce" or "warn"; "" is Enforce.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Enforce:
		return Enforce, nil
	case Warn:
		return Warn, nil
	}
	return "", fmt.Errorf("mode %q: want enforce or warn", s)
}

// Unmanaged says what happens to an image from a repository the manifest
// does not govern.
type Unmanaged string

// The policies for unmanaged images.
const (
	// DenyUnmanaged refuses such an image. The default.
	DenyUnmanaged Unmanaged = "deny"
	// AllowUnmanaged admits it, pinned or not.
	AllowUnmanaged Unmanaged = "allow"
)

// ParseUnmanaged parses "allow" or "deny"; "" is DenyUnmanaged.
func ParseUnmanaged(s string) (Unmanaged, error) {
	switch Unmanaged(s) {
	case "", DenyUnmanaged:
		return DenyUnmanaged, nil
	case AllowUnmanaged:
		return AllowUnmanaged, nil
	}
	return "", fmt.Errorf("unmanaged %q: want allow or deny", s)
}

// Kinds of finding the webhook adds to those of package admission.
const (
	// KindImageUnmanaged: an image from a repository the manifest does not
	// govern, with --unmanaged deny.
	KindImageUnmanaged admission.Kind = "image-unmanaged"
	// KindImageNotInRelease: an image from a repository that the routes
	// give to a release whose manifest pins no image of it.
	KindImageNotInRelease admission.Kind = "image-not-in-release"
	// KindRoutesOverlap: an image whose repository two routes that apply
	// to the pod's namespace both govern (known only once their manifests
	// load): which release judges it must not depend on the routes' order.
	KindRoutesOverlap admission.Kind = "routes-overlap"
	// KindImageInvalid: an image reference that does not parse.
	KindImageInvalid admission.Kind = "image-reference-invalid"
	// KindNotJudged: a request the webhook could not judge (no manifest
	// yet, an expired manifest, an object it cannot decode).
	KindNotJudged admission.Kind = "not-judged"
)

// Accepted is a manifest the webhook judges against: verified (or accepted
// unsigned, when that was allowed), with its images indexed by normalised
// repository.
type Accepted struct {
	Signed *manifest.Signed
	// Unsigned is true when the manifest was accepted without a signature
	// check (--insecure-allow-unsigned).
	Unsigned bool
	// At is when it was accepted.
	At time.Time

	repos map[string][]*manifest.Image
	names imagename.Names
	// verdicts caches judge's results by image reference (a verdictKey),
	// up to maxVerdicts; cached counts the entries added.
	verdicts *sync.Map
	cached   *atomic.Int64
}

// Accept indexes s for judging, with no registry aliases. It returns an
// error when one of the manifest's image repositories is not a valid
// repository name.
func Accept(s *manifest.Signed, unsigned bool, at time.Time) (*Accepted, error) {
	return AcceptNames(s, unsigned, at, imagename.Names{})
}

// AcceptNames is Accept with the registry aliases of names: repositories
// are compared as names normalises them (imagename.Names.Repository), on
// both sides, so that no spelling of a governed registry host (case, a
// default port, a trailing dot, an IPv4-mapped or loopback address, an
// alias) escapes governance.
func AcceptNames(s *manifest.Signed, unsigned bool, at time.Time, names imagename.Names) (*Accepted, error) {
	a := &Accepted{Signed: s, Unsigned: unsigned, At: at, repos: map[string][]*manifest.Image{}, names: names,
		verdicts: &sync.Map{}, cached: &atomic.Int64{}}
	for i := range s.Manifest.Images {
		im := &s.Manifest.Images[i]
		repo, err := names.Repository(im.Repository)
		if err != nil {
			return nil, fmt.Errorf("image %q: repository %q: %w", im.Name, im.Repository, err)
		}
		a.repos[repo] = append(a.repos[repo], im)
	}
	return a, nil
}

// ID is the release's "name@generation".
func (a *Accepted) ID() string { return a.Signed.Manifest.ID() }

// Governs reports whether the manifest pins images of repo (any spelling
// of it: "nginx", "docker.io/library/nginx" and
// "index.docker.io/library/nginx" are one repository).
func (a *Accepted) Governs(repo string) bool {
	r, err := a.names.Repository(repo)
	return err == nil && len(a.repos[r]) > 0
}

// ImageRef is one image a pod would pull, and where in the pod spec it is.
type ImageRef struct {
	// Field is "containers", "initContainers", "ephemeralContainers" or
	// "volumes" (an image volume).
	Field string
	// Name is the container's or volume's name.
	Name string
	// Image is the reference as the pod spec gives it.
	Image string
}

// Subject names the reference for a message: `container "web"`.
func (r ImageRef) Subject() string {
	what := map[string]string{
		"containers":          "container",
		"initContainers":      "init container",
		"ephemeralContainers": "ephemeral container",
		"volumes":             "image volume",
	}[r.Field]
	if what == "" {
		what = r.Field
	}
	return fmt.Sprintf("%s %q", what, r.Name)
}

// Judge returns the finding against img, or nil when it is admitted: an
// image pinned by a digest that is one of the manifest's digests for its
// repository (the index, a platform manifest or a platform config), or an
// image from a repository the manifest does not govern with
// AllowUnmanaged.
func (a *Accepted) Judge(img ImageRef, unmanaged Unmanaged) *admission.Finding {
	v := a.verdictOf(img.Image, unmanaged)
	if v.kind == "" {
		return nil
	}
	return &admission.Finding{
		Kind:     v.kind,
		Severity: admission.Refuse,
		Subject:  img.Subject(),
		Got:      img.Image,
		Want:     v.want,
		Message:  fmt.Sprintf("%s image %q: %s", img.Subject(), img.Image, v.reason),
	}
}

// verdict is the judgement of one image reference, whichever container
// names it; kind is "" for an admitted image.
type verdict struct {
	kind         admission.Kind
	want, reason string
}

// maxVerdicts bounds the verdicts an Accepted caches: a cluster runs few
// distinct images, and one that sends many must not grow the cache.
const maxVerdicts = 4096

type verdictKey struct {
	image     string
	unmanaged Unmanaged
}

func (a *Accepted) verdictOf(image string, unmanaged Unmanaged) verdict {
	k := verdictKey{image, unmanaged}
	if v, ok := a.verdicts.Load(k); ok {
		return v.(verdict)
	}
	v := a.judge(image, unmanaged)
	if a.cached.Add(1) <= maxVerdicts {
		a.verdicts.Store(k, v)
	}
	return v
}

func (a *Accepted) judge(image string, unmanaged Unmanaged) verdict {
	f := func(kind admission.Kind, want, format string, args ...any) verdict {
		return verdict{kind: kind, want: want, reason: fmt.Sprintf(format, args...)}
	}
	if image == "" {
		return f(admission.KindImageNotPinned, "", "no image")
	}
	ref, err := a.names.Reference(image)
	if err != nil {
		return f(KindImageInvalid, "", "not a valid image reference: %v", err)
	}
	repo := ref.Context().Name()
	// The repository as the pod spells it ("nginx"), with the name it
	// normalises to ("index.docker.io/library/nginx") when that differs;
	// the release's side as the manifest spells it.
	asked := repositoryOf(image)
	if asked != repo {
		asked += " (" + repo + ")"
	}
	images := a.repos[repo]
	if len(images) == 0 {
		if unmanaged == AllowUnmanaged {
			return verdict{}
		}
		return f(KindImageUnmanaged, "", "repository %s is not governed by release %s (unmanaged images are denied)", asked, a.ID())
	}
	pins := images[0].Repository
	want := wantDigests(images)
	pinned, ok := ref.(name.Digest)
	if !ok {
		return f(admission.KindImageNotPinned, want, "tag %q is not pinned by digest; release %s pins %s@%s",
			ref.Identifier(), a.ID(), pins, want)
	}
	if d, err := manifest.ParseDigest(pinned.DigestStr()); err == nil {
		for _, im := range images {
			if im.Matches(d, "") {
				return verdict{}
			}
		}
	}
	if tag := tagOf(image); tag != "" {
		for _, im := range images {
			if im.Tag == tag {
				return f(admission.KindImageDigestMismatch, im.Digest.String(),
					"tag %q moved: the pod asks for %s, release %s pins %s:%s at %s",
					tag, pinned.DigestStr(), a.ID(), im.Repository, tag, im.Digest)
			}
		}
	}
	return f(admission.KindImageDigestMismatch, want, "digest %s is not one of release %s's digests for %s (%s)",
		pinned.DigestStr(), a.ID(), asked, want)
}

// repositoryOf is the repository part of an image reference as written:
// without its digest (@…) and its tag (the last ":…" after the last "/").
func repositoryOf(image string) string {
	image, _, _ = strings.Cut(image, "@")
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}

// wantDigests lists the index (or manifest) digests the manifest pins for
// one repository.
func wantDigests(images []*manifest.Image) string {
	ds := make([]string, len(images))
	for i, im := range images {
		ds[i] = im.Digest.String()
	}
	return strings.Join(ds, ", ")
}

// tagOf returns the explicit tag of a reference ("app:v1@sha256:…" gives
// "v1"), or "".
func tagOf(ref string) string {
	base, _, _ := strings.Cut(ref, "@")
	i := strings.LastIndexByte(base, ':')
	if i < 0 || i < strings.LastIndexByte(base, '/') {
		return ""
	}
	return base[i+1:]
}
