package imagesig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
)

// Options configure a Verifier.
type Options struct {
	// Trust says whose signatures count: a key, or a keyless identity with
	// a trusted root (see signature.Options).
	Trust signature.Options
	// Policy says which digests of an index must be signed.
	Policy Policy
	// Remote are go-containerregistry options for the registry (the shared
	// transport, a keychain). Only Verify and Embed use the registry.
	Remote []remote.Option
	// Cache, when set, remembers digests that verified.
	Cache *Cache
	// Logger receives debug logs; nil is silent.
	Logger *slog.Logger
}

// Verifier verifies image signatures. It is safe for concurrent use.
type Verifier struct {
	opt   Options
	pull  *remote.Puller // reuses the registry's ping and token across fetches
	co    *cosign.CheckOpts
	trust string // the cache key's prefix: a fingerprint of opt.Trust
	log   *slog.Logger
}

// New returns a Verifier, or an error for trust options that do not make
// sense, or an *verdict.UnavailableError when the key's public key cannot
// be read (a KMS that cannot be reached).
func New(o Options) (*Verifier, error) {
	if err := o.Trust.Check(); err != nil {
		return nil, err
	}
	if _, err := ParseIndexPolicy(string(o.Policy.Index)); err != nil {
		return nil, err
	}
	if o.Policy.Index == "" {
		o.Policy.Index = EveryPlatform
	}
	if o.Trust.Key != nil {
		// The cache key names the key: it must be known.
		if _, err := signature.KeyFingerprint(o.Trust.Key); err != nil {
			return nil, verdict.Unavailable("signing key", fmt.Errorf("reading the public key: %w", err))
		}
	}
	co := o.Trust.CheckOpts()
	co.Offline = true // never look an entry up in Rekor: bundles are verified offline
	co.RegistryClientOpts = []ociremote.Option{ociremote.WithRemoteOptions(o.Remote...)}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	pull, err := remote.NewPuller(o.Remote...)
	if err != nil {
		return nil, err
	}
	return &Verifier{opt: o, pull: pull, co: co, trust: trustKey(o.Trust), log: log}, nil
}

// trustKey fingerprints the trust settings, so that a digest verified
// under one set of settings does not count under another.
func trustKey(o signature.Options) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00tlog=%t\x00sct=%t\x00", o.Want(), !o.IgnoreTlog, !o.IgnoreSCT)
	if tr, ok := o.TrustedRoot.(*root.TrustedRoot); ok {
		if b, err := tr.MarshalJSON(); err == nil {
			h.Write(b)
		}
	} else if o.TrustedRoot != nil {
		fmt.Fprintf(h, "%p", o.TrustedRoot)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (v *Verifier) cacheKey(d manifest.Digest) string { return v.trust + "/" + d.String() }

// Policy returns the policy in force (with defaults filled in).
func (v *Verifier) Policy() Policy { return v.opt.Policy }

// Signer describes whose signatures count, for reports: "key " and the
// key's fingerprint, or the keyless identity (signature.Options.Want).
func (v *Verifier) Signer() string { return v.opt.Trust.Want() }

// Verify verifies, against the registry, the signatures of every
// digest the policy requires of each image, the cache first. It returns
// nil when all verify; otherwise the refusals (*signature.Error) and
// could-not-verify errors (*verdict.UnavailableError) joined, refusals
// first.
func (v *Verifier) Verify(ctx context.Context, images []manifest.Image) error {
	return v.each(images, func(im *manifest.Image, t Target) error {
		return v.verifyRemote(ctx, im, t)
	})
}

// each runs fn on every target of every image and joins the errors,
// refusals first, so that errors.As picks a refusal when there is one.
func (v *Verifier) each(images []manifest.Image, fn func(*manifest.Image, Target) error) error {
	var refusals, others []error
	for i := range images {
		im := &images[i]
		targets, err := v.opt.Policy.Targets(im)
		if err != nil {
			refusals = append(refusals, &signature.Error{Subject: "image " + im.Name, Reason: err.Error()})
			continue
		}
		for _, t := range targets {
			if err := fn(im, t); err != nil {
				if verdict.IsMismatch(err) {
					refusals = append(refusals, err)
				} else {
					others = append(others, err)
				}
			}
		}
	}
	return errors.Join(append(refusals, others...)...)
}

func subject(im *manifest.Image, t Target) string {
	return "image " + im.Name + " " + t.What + " " + t.Digest.String()
}

func (v *Verifier) verifyRemote(ctx context.Context, im *manifest.Image, t Target) error {
	if v.opt.Cache != nil && v.opt.Cache.Has(v.cacheKey(t.Digest)) {
		v.log.Debug("image signature cached", "image", im.Name, "digest", t.Digest)
		return nil
	}
	sigs, err := v.fetch(ctx, im.Repository, t.Digest)
	if err != nil {
		return err
	}
	if _, err := v.verifyOne(ctx, subject(im, t), t.Digest, sigs); err != nil {
		return err
	}
	v.remember(t.Digest)
	return nil
}

func (v *Verifier) remember(d manifest.Digest) {
	if v.opt.Cache == nil {
		return
	}
	if err := v.opt.Cache.Add(v.cacheKey(d)); err != nil {
		v.log.Warn("signature cache not written", "err", err)
	}
}

// fetch reads the cosign signatures of repo@d from the registry. No
// signature image is an empty list.
func (v *Verifier) fetch(ctx context.Context, repo string, d manifest.Digest) ([]oci.Signature, error) {
	r, err := name.NewRepository(repo)
	if err != nil {
		return nil, &manifest.ValidationError{Field: "images.repository", Reason: fmt.Sprintf("%q: %v", repo, err), Err: err}
	}
	dep := "registry " + r.RegistryStr()
	ropts := append(append([]remote.Option(nil), v.opt.Remote...), remote.WithContext(ctx), remote.Reuse(v.pull))
	opts := []ociremote.Option{ociremote.WithRemoteOptions(ropts...)}
	tag, err := ociremote.SignatureTag(r.Digest(d.String()), opts...)
	if err != nil {
		return nil, verdict.Unavailable(dep, err)
	}
	sigs, err := ociremote.Signatures(tag, opts...)
	if err != nil {
		return nil, verdict.Unavailable(dep, fmt.Errorf("reading signatures %s: %w", tag, err))
	}
	list, err := sigs.Get()
	if err != nil {
		return nil, verdict.Unavailable(dep, fmt.Errorf("reading signatures %s: %w", tag, err))
	}
	// Read each signature layer once, into memory.
	for i, s := range list {
		if list[i], err = static.Copy(s); err != nil {
			return nil, verdict.Unavailable(dep, fmt.Errorf("reading signatures %s: %w", tag, err))
		}
	}
	return list, nil
}

// verifyOne returns the first of sigs that verifies for digest d, or the
// refusal: unsigned for none, or why the last one failed.
func (v *Verifier) verifyOne(ctx context.Context, subject string, d manifest.Digest, sigs []oci.Signature) (oci.Signature, error) {
	want := v.opt.Trust.Want()
	if len(sigs) == 0 {
		return nil, &signature.Error{Subject: subject, Reason: "unsigned: no cosign signature", Want: want, Err: signature.ErrUnsigned}
	}
	h, err := v1.NewHash(d.String())
	if err != nil {
		return nil, &manifest.ValidationError{Field: "digest", Reason: err.Error(), Err: err}
	}
	var last error
	for _, s := range sigs {
		if _, err := cosign.VerifyImageSignature(ctx, s, h, v.co); err != nil {
			last = err
			continue
		}
		return s, nil
	}
	reason := "no signature verifies"
	if len(sigs) > 1 {
		reason = "none of " + strconv.Itoa(len(sigs)) + " signatures verifies"
	}
	return nil, &signature.Error{Subject: subject, Reason: reason, Want: want, Err: last}
}
