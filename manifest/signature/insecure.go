package signature

import (
	"context"

	"github.com/lockstep-dev/lockstep/manifest"
)

// AllowUnsigned returns a verifier that accepts a manifest with no
// signature at all (--insecure-allow-unsigned) and otherwise defers to
// inner: a wrongly signed manifest is still refused. With a nil inner,
// every manifest is accepted and nothing is verified. Callers say in every
// report that they ran without signature verification.
func AllowUnsigned(inner manifest.Verifier) manifest.Verifier { return allowUnsigned{inner} }

type allowUnsigned struct{ inner manifest.Verifier }

func (a allowUnsigned) Verify(ctx context.Context, s *manifest.Signed) error {
	if a.inner == nil {
		return ctx.Err()
	}
	if err := a.inner.Verify(ctx, s); err != nil && !IsUnsigned(err) {
		return err
	}
	return nil
}
