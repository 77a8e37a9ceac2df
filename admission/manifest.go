package admission

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
	"github.com/lockstep-dev/lockstep/verdict"
)

// GenerationGuard is the consumer's trusted state: the highest generation
// of each release it has accepted. Check (the function) is the one place
// it is consulted: it calls the guard's Check once the manifest's
// signature verifies, and its Accept only when the decision admits and it
// is not a dry run. *trusted.State is the implementation.
type GenerationGuard interface {
	// Check refuses s with a *trusted.RefusalError (a rollback below an
	// accepted generation, an expired manifest), whose Kind becomes the
	// finding's kind; a bare *manifest.GenerationError is a rollback too.
	// Any other error means the state cannot be read (fail closed).
	Check(ctx context.Context, s *manifest.Signed) error
	// Accept records s as accepted for its release.
	Accept(ctx context.Context, s *manifest.Signed) error
}

var (
	_ GenerationGuard = (*trusted.State)(nil)
	_ GenerationGuard = (*trusted.Source)(nil)
)

// refusalKind maps a refusal of the trusted state (or of its source) to
// the finding kind it is, by type: a *trusted.RefusalError by its Kind, a
// *manifest.GenerationError as a rollback. ok is false for anything else.
func refusalKind(err error) (kind Kind, ok bool) {
	var re *trusted.RefusalError
	if errors.As(err, &re) {
		switch re.Kind {
		case trusted.KindRollback:
			return KindManifestRollback, true
		case trusted.KindExpired:
			return KindManifestExpired, true
		case trusted.KindWrongRelease:
			return KindManifestWrongRelease, true
		}
	}
	var wr *manifest.WrongReleaseError
	if errors.As(err, &wr) {
		return KindManifestWrongRelease, true
	}
	var ge *manifest.GenerationError
	if errors.As(err, &ge) {
		return KindManifestRollback, true
	}
	return "", false
}

// refusalFinding is the finding for a refusal of refusalKind.
func refusalFinding(kind Kind, subject string, err error) Finding {
	f := Finding{Kind: kind, Subject: subject, Message: err.Error()}
	var ge *manifest.GenerationError
	if errors.As(err, &ge) {
		f.Got, f.Want = fmt.Sprint(ge.Offered), fmt.Sprintf("at least %d", ge.Have)
	}
	var wr *manifest.WrongReleaseError
	if errors.As(err, &wr) {
		f.Got, f.Want = wr.Got, wr.Want
	}
	return f
}

// manifest checks the fetched manifest and returns it, or nil when it
// cannot be trusted.
func (c *checker) manifest(ctx context.Context, s *manifest.Signed, err error) *manifest.Manifest {
	cfg := c.cfg
	var ve *manifest.ValidationError
	kind, refusal := refusalKind(err)
	switch {
	case errors.As(err, &ve):
		c.add(Finding{Kind: KindManifestInvalid, Subject: "manifest", Message: err.Error()})
		return nil
	case refusal:
		c.add(refusalFinding(kind, "manifest", err))
		return nil
	case errors.Is(err, manifest.ErrNotFound):
		c.add(Finding{Kind: KindReleaseNotFound, Subject: "manifest", Message: err.Error()})
		return nil
	case err != nil:
		c.unreachable("manifest", fmt.Errorf("fetching the manifest: %w", err))
		return nil
	}
	m := s.Manifest
	c.update(func(d *Decision) {
		d.Release, d.Generation, d.ManifestDigest, d.ManifestLocation = m.Release.Name, m.Release.Generation, s.Digest, s.Location
		d.ManifestCachedAt = s.CachedAt
	})
	if cfg.Verifier == nil && !cfg.AllowUnsigned {
		c.add(Finding{Kind: KindManifestUnsigned, Subject: m.ID(), Message: "no verifier configured and unsigned manifests are not allowed"})
		return nil
	}
	if cfg.Verifier != nil {
		// With AllowUnsigned the verifier still refuses a wrong signature;
		// it only lets a missing one pass.
		if err := cfg.Verifier.Verify(ctx, s); err != nil {
			if verdict.IsUnavailable(err) {
				c.unreachable("manifest signature", err)
			} else {
				c.add(Finding{Kind: KindManifestSignature, Subject: m.ID(), Message: err.Error()})
			}
			return nil
		}
	}
	if cfg.AllowUnsigned {
		// Every report says that signatures were not required.
		c.update(func(d *Decision) { d.Unsigned = true })
		c.add(Finding{Kind: KindManifestUnsigned, Severity: Warn, Subject: m.ID(),
			Message: "unsigned manifests are accepted: this manifest's signature may not have been verified"})
	}
	if now := cfg.Now(); m.Expired(now) {
		c.add(Finding{Kind: KindManifestExpired, Subject: m.ID(), Got: now.UTC().Format(time.RFC3339), Want: "before " + m.Release.ExpiresAt.UTC().Format(time.RFC3339),
			Message: fmt.Sprintf("manifest %s expired at %s", m.ID(), m.Release.ExpiresAt.UTC().Format(time.RFC3339))})
		return nil
	}
	if cfg.Guard != nil {
		if err := cfg.Guard.Check(ctx, s); err != nil {
			if kind, ok := refusalKind(err); ok {
				c.add(refusalFinding(kind, m.ID(), err))
			} else {
				c.unreachable("trusted state", fmt.Errorf("reading the trusted state: %w", err))
			}
			return nil
		}
	}
	return m
}
