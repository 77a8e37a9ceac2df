package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify"
)

// Options configure pinning.
type Options struct {
	// Remote are extra go-containerregistry options (transport, keychain).
	Remote []remote.Option
}

// Pin resolves ref and returns it as a manifest image with role name.
// A reference that does not parse is a *manifest.ValidationError; a
// registry that cannot be reached an *verify.UnavailableError.
func Pin(ctx context.Context, role, ref string, opt Options) (*manifest.Image, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, &manifest.ValidationError{Field: "image " + role, Reason: fmt.Sprintf("reference %q: %v", ref, err), Err: err}
	}
	ropts := append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opt.Remote...)
	desc, err := remote.Get(r, ropts...)
	if err != nil {
		return nil, verify.Unavailable("registry "+r.Context().RegistryStr(), fmt.Errorf("resolving %s: %w", ref, err))
	}
	im := &manifest.Image{
		Name:       role,
		Ref:        ref,
		Repository: r.Context().Name(),
		Digest:     manifest.MustParseDigest(desc.Digest.String()),
		MediaType:  string(desc.MediaType),
	}
	if t, ok := r.(name.Tag); ok {
		im.Tag = t.TagStr()
	}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, verify.Unavailable("registry "+r.Context().RegistryStr(), fmt.Errorf("reading index %s: %w", ref, err))
		}
		im2, err := idx.IndexManifest()
		if err != nil {
			return nil, verify.Unavailable("registry "+r.Context().RegistryStr(), fmt.Errorf("reading index %s: %w", ref, err))
		}
		for _, m := range im2.Manifests {
			if m.Platform == nil || !m.MediaType.IsImage() {
				continue // attestations and other artifacts
			}
			img, err := idx.Image(m.Digest)
			if err != nil {
				return nil, verify.Unavailable("registry "+r.Context().RegistryStr(), fmt.Errorf("reading %s@%s: %w", ref, m.Digest, err))
			}
			cfg, err := img.ConfigName()
			if err != nil {
				return nil, verify.Unavailable("registry "+r.Context().RegistryStr(), fmt.Errorf("reading config of %s@%s: %w", ref, m.Digest, err))
			}
			im.Platforms = append(im.Platforms, platform(*m.Platform, m.Digest, cfg))
		}
		return im, nil
	}
	img, err := desc.Image()
	if err != nil {
		return nil, verify.Unavailable("registry "+r.Context().RegistryStr(), fmt.Errorf("reading image %s: %w", ref, err))
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, verify.Unavailable("registry "+r.Context().RegistryStr(), fmt.Errorf("reading config of %s: %w", ref, err))
	}
	cfg, err := img.ConfigName()
	if err != nil {
		return nil, verify.Unavailable("registry "+r.Context().RegistryStr(), fmt.Errorf("reading config of %s: %w", ref, err))
	}
	p := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
	im.Platforms = []manifest.Platform{platform(p, desc.Digest, cfg)}
	return im, nil
}

func platform(p v1.Platform, d, cfg v1.Hash) manifest.Platform {
	return manifest.Platform{
		OS:           p.OS,
		Architecture: p.Architecture,
		Variant:      p.Variant,
		Digest:       manifest.MustParseDigest(d.String()),
		Config:       manifest.MustParseDigest(cfg.String()),
	}
}
