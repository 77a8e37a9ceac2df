package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/ggcrretry"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultConcurrency is how many references PinAll resolves at once.
const DefaultConcurrency = 16

// Options configure pinning. The zero value pins every platform with the
// default keychain, transport.DefaultPolicy and no logging.
type Options struct {
	// Platform, "os/arch[/variant]", keeps only that platform of an index
	// (a platform without a variant matches every variant); an index
	// without it is a *PlatformError. A single-platform image must be of
	// that platform. Empty keeps every platform.
	Platform string
	// Concurrency bounds PinAll's references in flight (default 16).
	Concurrency int
	// Client carries every request; nil means a new
	// transport.New(transport.DefaultPolicy()). go-containerregistry's
	// retryer takes the client's Policy (internal/transport/ggcrretry).
	Client *transport.Client
	// Keychain supplies credentials (default authn.DefaultKeychain: the
	// Docker config and its credential helpers).
	Keychain authn.Keychain
	// Previous, when set, is the last release's manifest: PinAll fails
	// with a *MovedTagError when a tag now names another digest than it
	// did there, unless AllowMoved names it (see MovedTag.Matches).
	Previous *manifest.Manifest
	// Known are references already pinned elsewhere, e.g. in the files
	// about to be rewritten ("repo:tag@sha256:…"): a tag whose digest there
	// differs from the one it resolves to now is a moved tag too, as with
	// Previous. References without both a tag and a digest are ignored.
	Known []string
	// AllowMoved names the moved tags to accept on purpose: a role name,
	// a reference as given, or a repository:tag.
	AllowMoved []string
	// Cache, if set, is a directory where immutable objects (image
	// configs, platform manifests) are kept by digest, so that pinning a
	// tag again costs one request. Everything read from it is verified
	// against its digest. Empty: no cache.
	Cache string
	// Logger receives debug and warning messages (default: none).
	Logger *slog.Logger
	// Remote are extra go-containerregistry options, applied last (a
	// WithTransport there replaces Client's Transport, and with it the
	// retry budget's earnings: ggcrretry.Options).
	Remote []remote.Option
	// Verifier, if set, verifies every image as soon as it is pinned, e.g.
	// its cosign signatures (*imagesig.Verifier). A refusal (an error that
	// verdict.IsMismatch) is returned like a moved tag, joined, with the
	// complete Result (see Result.Refusals); any other error is a failure
	// of that reference, as a registry's would be.
	Verifier Verifier
}

// Verifier verifies pinned images; *imagesig.Verifier is one. Verify is
// called concurrently, one image at a time, with the image as pinned.
type Verifier interface {
	Verify(ctx context.Context, images []manifest.Image) error
}

// Request names one image to pin: its role in the release and its
// reference.
type Request struct {
	// Name is the role, e.g. "web"; empty means the reference.
	Name string
	// Ref is "repo[:tag][@sha256:…]".
	Ref string
}

// Pin resolves ref and returns it as a manifest image with role name. See
// Resolve for what is resolved and the errors returned; with a
// *MovedTagError, the image is returned too.
func Pin(ctx context.Context, role, ref string, opt Options) (*manifest.Image, error) {
	ims, err := PinAll(ctx, []Request{{Name: role, Ref: ref}}, opt)
	if len(ims) == 1 && ims[0].Ref != "" {
		return &ims[0], err
	}
	return nil, err
}

// PinAll resolves every request and returns the images in input order: it
// is Resolve's Images. See Resolve for what is resolved and the errors.
func PinAll(ctx context.Context, reqs []Request, opt Options) ([]manifest.Image, error) {
	res, err := Resolve(ctx, reqs, opt)
	if res == nil {
		return nil, err
	}
	return res.Images, err
}

// Result is what Resolve found.
type Result struct {
	// Images are the pinned images, in the order of the requests.
	Images []manifest.Image
	// Moved lists every moved tag, allowed or not: a "repo:tag@digest"
	// request whose tag now names another digest, and tags that moved
	// since opt.Previous or opt.Known.
	Moved []MovedTag
	// Refusals holds, with opt.Verifier, the verifier's refusal of each
	// image (in the order of Images), nil for an image it accepted. Without
	// a Verifier it is nil.
	Refusals []error
}

// Resolve resolves every request, at most opt.Concurrency at once. For an
// index it records the index digest and, per image platform (attestations
// and other artifacts skipped), the manifest and config digests; for a
// single image manifest, one platform read from its config. A
// "repo:tag@digest" request is pinned to its digest, which must exist, and
// its tag must still name it.
//
// Every reference and option is checked before any request is sent: a
// malformed one is a *ReferenceError. Then each failure is typed (see the
// package documentation) and all are returned joined, in input order; the
// first *verdict.UnavailableError stops the references not yet started.
// Moved tags that opt.AllowMoved does not name are a *MovedTagError,
// returned with the complete Result; so are opt.Verifier's refusals,
// joined after it.
func Resolve(ctx context.Context, reqs []Request, opt Options) (*Result, error) {
	refs := make([]reference, len(reqs))
	var errs []error
	for i, q := range reqs {
		r, err := parseReference(q.Ref)
		if err != nil {
			errs = append(errs, err)
		}
		refs[i] = r
	}
	if opt.Platform != "" {
		if err := parsePlatform(opt.Platform); err != nil {
			errs = append(errs, &ReferenceError{Ref: opt.Platform, Err: err})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p, err := newPinner(ctx, opt)
	if err != nil {
		return nil, err
	}
	defer p.cache.close() // the cache's writes, made while pinning
	n := opt.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make([]manifest.Image, len(reqs))
	moved := make([]*MovedTag, len(reqs))
	perr := make([]error, len(reqs))
	var refusals []error
	if opt.Verifier != nil {
		refusals = make([]error, len(reqs))
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range reqs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			role := reqs[i].Name
			if role == "" {
				role = reqs[i].Ref
			}
			im, mt, err := p.pin(ctx, role, refs[i])
			if err == nil && opt.Verifier != nil {
				if err = opt.Verifier.Verify(ctx, []manifest.Image{*im}); verdict.IsMismatch(err) {
					refusals[i], err = err, nil
				}
			}
			if err != nil {
				perr[i] = err
				if verdict.IsUnavailable(err) {
					cancel(err)
				}
				return
			}
			out[i], moved[i] = *im, mt
		}()
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		// Keep the registry's error; drop the cancellations it caused.
		errs = nil
		for _, err := range perr {
			if err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 {
			errs = append(errs, cause)
		}
		return nil, errors.Join(errs...)
	}
	if err := errors.Join(perr...); err != nil {
		return nil, err
	}
	res := &Result{Images: out, Moved: []MovedTag{}, Refusals: refusals}
	for _, m := range moved {
		if m != nil {
			res.Moved = append(res.Moved, *m)
		}
	}
	res.Moved = append(res.Moved, Moved(previous(opt), out, opt.AllowMoved)...)
	err = p.refuse(res.Moved)
	if r := errors.Join(refusals...); r != nil {
		err = errors.Join(err, r)
	}
	return res, err
}

type pinner struct {
	opt     Options
	puller  *remote.Puller
	cache   *blobCache
	objects fetchedObjects // this run's, whatever the cache
	log     *slog.Logger
}

func newPinner(ctx context.Context, opt Options) (*pinner, error) {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	puller, err := remote.NewPuller(remoteOptions(ctx, opt)...)
	if err != nil {
		return nil, fmt.Errorf("configuring the registry client: %w", err)
	}
	return &pinner{opt: opt, puller: puller, cache: newBlobCache(opt.Cache, log), log: log}, nil
}

// remoteOptions are go-containerregistry's options for opt: our transport
// and a retryer following its policy (ggcrretry), and the keychain.
func remoteOptions(ctx context.Context, opt Options) []remote.Option {
	client := opt.Client
	if client == nil {
		client = transport.New(transport.DefaultPolicy())
	}
	keys := opt.Keychain
	if keys == nil {
		keys = authn.DefaultKeychain
	}
	ropts := append(ggcrretry.Options(client), remote.WithContext(ctx), remote.WithAuthFromKeychain(keys))
	return append(ropts, opt.Remote...)
}

// pin resolves one reference, and reports its tag when it no longer names
// the reference's digest.
func (p *pinner) pin(ctx context.Context, role string, r reference) (*manifest.Image, *MovedTag, error) {
	im, err := p.resolve(ctx, role, r)
	if err != nil || r.digest.IsZero() || !r.hasTag() {
		return im, nil, err
	}
	mt, err := p.checkTag(ctx, role, r)
	return im, mt, err
}

func (p *pinner) resolve(ctx context.Context, role string, r reference) (*manifest.Image, error) {
	host := r.repo.RegistryStr()
	start := time.Now()
	var target name.Reference = r.repo.Tag(r.tag)
	if !r.digest.IsZero() {
		target = r.repo.Digest(r.digest.String())
	}
	desc, err := p.fetch(ctx, r, target)
	if err != nil {
		return nil, err
	}
	got, err := manifest.ParseDigest(desc.Digest.String())
	if err != nil {
		return nil, verdict.Unavailable("registry "+host, fmt.Errorf("resolving %s: digest %s: %w", r.given, desc.Digest, err))
	}
	im := &manifest.Image{
		Name:       role,
		Ref:        r.given,
		Repository: r.repo.Name(),
		Digest:     got,
		MediaType:  string(desc.MediaType),
	}
	if r.hasTag() {
		im.Tag = r.tag
	}
	switch {
	case desc.MediaType.IsIndex():
		err = p.index(ctx, r, desc, im)
	case desc.MediaType.IsImage():
		err = p.image(ctx, r, desc, im)
	default:
		err = verdict.Unavailable("registry "+host, fmt.Errorf("resolving %s: media type %q is neither an image nor an index", r.given, desc.MediaType))
	}
	if err != nil {
		return nil, err
	}
	p.log.Debug("pinned", "ref", r.given, "digest", im.Digest.String(), "platforms", len(im.Platforms), "took", time.Since(start))
	return im, nil
}

// fetched is a manifest or index as resolved: its digest, media type and
// bytes (which hash to the digest).
type fetched struct {
	Digest    v1.Hash
	MediaType types.MediaType
	Manifest  []byte
}

// fetch resolves target to its manifest. Without a cache, or for a tag not
// seen before, that is one GET. With a cache, a tag seen before and any
// digest are first asked with a HEAD (lighter for the registry, and not
// counted by Docker Hub's pull limits): when the cache holds the manifest
// it names, that one request is all. The cache only ever saves requests:
// what it holds is verified, and a tag is always asked of the registry.
func (p *pinner) fetch(ctx context.Context, r reference, target name.Reference) (*fetched, error) {
	host := r.repo.RegistryStr()
	seen := r.repo.Name() + ":" + r.tag
	if p.cache != nil && (!r.digest.IsZero() || p.cache.seen(seen)) {
		if head, err := p.puller.Head(ctx, target); err == nil {
			if raw, ok := p.cache.get(head.Digest); ok {
				return &fetched{Digest: head.Digest, MediaType: head.MediaType, Manifest: raw}, nil
			}
			// Not cached: fetch it by the digest the tag named.
			target = r.repo.Digest(head.Digest.String())
		}
		// On a failed HEAD (some registries refuse it), ask with a GET,
		// whose answer is authoritative.
	}
	desc, err := p.puller.Get(ctx, target)
	if err != nil {
		return nil, classify(r.given, target.String(), host, err)
	}
	if err := p.cache.put(desc.Digest, desc.Manifest); err != nil {
		p.log.Debug("not cached", "digest", desc.Digest.String(), "err", err)
	}
	if r.digest.IsZero() {
		p.cache.markSeen(seen)
	}
	return &fetched{Digest: desc.Digest, MediaType: desc.MediaType, Manifest: desc.Manifest}, nil
}

// checkTag checks that the tag of a "repo:tag@digest" reference still
// resolves to the digest, and returns the moved tag when it does not.
func (p *pinner) checkTag(ctx context.Context, role string, r reference) (*MovedTag, error) {
	tag := r.repo.Tag(r.tag)
	head, err := p.puller.Head(ctx, tag)
	if err != nil {
		return nil, classify(r.given, tag.String(), r.repo.RegistryStr(), err)
	}
	now, err := manifest.ParseDigest(head.Digest.String())
	if err != nil {
		return nil, verdict.Unavailable("registry "+r.repo.RegistryStr(), fmt.Errorf("resolving %s: %w", tag, err))
	}
	if now == r.digest {
		return nil, nil
	}
	mt := &MovedTag{Name: role, Ref: r.given, Repository: r.repo.Name(), Tag: r.tag, Previous: r.digest, Current: now}
	mt.Allowed = mt.allowedBy(p.opt.AllowMoved)
	return mt, nil
}
