package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// indexFetches bounds the platform manifests of one index fetched at
// once. The client's per-host cap (transport.Policy.MaxConnsPerHost) still
// bounds the requests in flight to a registry, whatever the index.
const indexFetches = 8

// index fills im's platforms from an index. Every entry that is an image
// manifest for a real platform is an image, whether or not it carries an
// artifactType (crane index append writes one on every entry): what
// excludes an entry is what marks an attestation (isAttestation), or a
// config that is not an image config (an artifact). An entry without a
// platform takes its platform from its config, as a single image does. A
// nested index is a *NestedIndexError: lockstep does not guess which of
// its images a runtime would pull.
//
// The platform manifests (and the configs of entries without a platform)
// are fetched concurrently, at most indexFetches at once, and all of them
// even when one fails (a failure that stops the pin is the registry's, and
// Resolve stops the rest); the platforms are in the index's order, and of
// several failures the first entry's is returned, as if fetched one after
// another.
func (p *pinner) index(ctx context.Context, r reference, desc *fetched, im *manifest.Image) error {
	host := r.repo.RegistryStr()
	idx, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return verdict.Unavailable("registry "+host, fmt.Errorf("reading index %s: %w", r.given, err))
	}
	entries := make([]indexEntry, len(idx.Manifests))
	for i, m := range idx.Manifests {
		if m.MediaType.IsIndex() && !isAttestation(m) {
			return &NestedIndexError{Ref: r.given, Digest: m.Digest.String()}
		}
		if !m.MediaType.IsImage() || isAttestation(m) {
			p.log.Debug("skipping index entry", "ref", r.given, "digest", m.Digest.String(), "mediaType", string(m.MediaType))
			continue
		}
		if m.Platform != nil {
			plat := manifest.Platform{OS: m.Platform.OS, Architecture: m.Platform.Architecture, Variant: m.Platform.Variant}
			if p.opt.Platform != "" && !manifest.PlatformMatches(plat, p.opt.Platform) {
				entries[i].available = plat.String()
				continue
			}
		}
		entries[i].fetch = true
	}
	sem := make(chan struct{}, indexFetches)
	var wg sync.WaitGroup
	for i, m := range idx.Manifests {
		if !entries[i].fetch {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			e := &entries[i]
			if e.plat, e.keep, e.err = p.entry(ctx, r, m); e.err == nil && (e.keep || e.plat.OS != "") {
				e.available = e.plat.String()
			}
		}()
	}
	wg.Wait()
	var available []string
	for _, e := range entries {
		if e.err != nil {
			im.Platforms = nil
			return e.err
		}
		if e.available != "" {
			available = append(available, e.available)
		}
		if e.keep {
			im.Platforms = append(im.Platforms, e.plat)
		}
	}
	if len(im.Platforms) == 0 {
		return &PlatformError{Ref: r.given, Want: p.opt.Platform, Available: available}
	}
	return nil
}

// indexEntry is what index found of one entry: whether to fetch it, and
// then its platform, whether it is one of the image's, the platform to
// name as available, or the failure.
type indexEntry struct {
	fetch     bool
	plat      manifest.Platform
	keep      bool
	available string
	err       error
}

// entry fetches the platform manifest of index entry m (an image manifest,
// not an attestation) and returns its platform, with keep false for an
// artifact (a config that is not an image's) or a platform that is
// unknown (plat empty) or not opt.Platform (plat set).
func (p *pinner) entry(ctx context.Context, r reference, m v1.Descriptor) (plat manifest.Platform, keep bool, err error) {
	host := r.repo.RegistryStr()
	child := r.repo.Digest(m.Digest.String())
	raw, err := p.object(r, m.Digest, func() ([]byte, error) {
		cd, err := p.puller.Get(ctx, child)
		if err != nil {
			return nil, classify(r.given, child.String(), host, err)
		}
		return cd.Manifest, nil
	})
	if err != nil {
		return plat, false, err
	}
	mf, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return plat, false, verdict.Unavailable("registry "+host, fmt.Errorf("reading %s: %w", child, err))
	}
	if !isImageConfig(mf.Config.MediaType) {
		p.log.Debug("skipping artifact", "ref", r.given, "digest", m.Digest.String(), "config", string(mf.Config.MediaType))
		return plat, false, nil
	}
	if m.Platform != nil {
		plat = manifest.Platform{OS: m.Platform.OS, Architecture: m.Platform.Architecture, Variant: m.Platform.Variant}
	} else {
		cf, err := p.config(ctx, r, mf.Config.Digest)
		if err != nil {
			return plat, false, err
		}
		plat = manifest.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
		if plat.OS == "" || plat.Architecture == "" || plat.OS == "unknown" || plat.Architecture == "unknown" {
			return manifest.Platform{}, false, nil
		}
		if p.opt.Platform != "" && !manifest.PlatformMatches(plat, p.opt.Platform) {
			return plat, false, nil
		}
	}
	if plat.Digest, err = manifest.ParseDigest(m.Digest.String()); err == nil {
		plat.Config, err = manifest.ParseDigest(mf.Config.Digest.String())
	}
	if err != nil {
		return plat, false, verdict.Unavailable("registry "+host, fmt.Errorf("reading %s: %w", child, err))
	}
	return plat, true, nil
}

// isAttestation reports whether an index entry is marked as an
// attestation or signature: BuildKit's unknown/unknown platform, or a
// vnd.docker.reference.type annotation.
func isAttestation(m v1.Descriptor) bool {
	return m.Annotations["vnd.docker.reference.type"] != "" ||
		m.Platform != nil && (m.Platform.OS == "unknown" || m.Platform.Architecture == "unknown")
}

// isImageConfig reports whether a manifest's config is a runnable image's
// (Docker's or OCI's), not an artifact's.
func isImageConfig(mt types.MediaType) bool {
	return mt == types.DockerConfigJSON || mt == types.OCIConfigJSON
}

// image fills im's one platform from a single image manifest and its
// config.
func (p *pinner) image(ctx context.Context, r reference, desc *fetched, im *manifest.Image) error {
	host := r.repo.RegistryStr()
	mf, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return verdict.Unavailable("registry "+host, fmt.Errorf("reading image %s: %w", r.given, err))
	}
	cfg := mf.Config.Digest
	cf, err := p.config(ctx, r, cfg)
	if err != nil {
		return err
	}
	plat := manifest.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant, Digest: im.Digest}
	if plat.Config, err = manifest.ParseDigest(cfg.String()); err != nil {
		return verdict.Unavailable("registry "+host, fmt.Errorf("reading image %s: %w", r.given, err))
	}
	if p.opt.Platform != "" && !manifest.PlatformMatches(plat, p.opt.Platform) {
		return &PlatformError{Ref: r.given, Want: p.opt.Platform, Available: []string{plat.String()}}
	}
	im.Platforms = []manifest.Platform{plat}
	return nil
}

// config reads the image config cfg of r (from the cache when it holds
// it), verified against its digest as it is read.
func (p *pinner) config(ctx context.Context, r reference, cfg v1.Hash) (*v1.ConfigFile, error) {
	host := r.repo.RegistryStr()
	raw, err := p.object(r, cfg, func() ([]byte, error) {
		l, err := p.puller.Layer(ctx, r.repo.Digest(cfg.String()))
		if err != nil {
			return nil, classify(r.given, "the config of "+r.given, host, err)
		}
		rc, err := l.Compressed() // verified against cfg as it is read
		if err != nil {
			return nil, classify(r.given, "the config of "+r.given, host, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, maxCached+1))
		if err != nil {
			return nil, classify(r.given, "the config of "+r.given, host, err)
		}
		if len(b) > maxCached {
			return nil, verdict.Unavailable("registry "+host, fmt.Errorf("the config of %s is over %d bytes", r.given, maxCached))
		}
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(raw))
	if err != nil {
		return nil, verdict.Unavailable("registry "+host, fmt.Errorf("reading the config of %s: %w", r.given, err))
	}
	return cf, nil
}

// object returns the immutable object with digest d of r's repository:
// fetched before in this run (or being fetched: see fetchedObjects), from
// the cache, or fetched now by fetch, and cached.
func (p *pinner) object(r reference, d v1.Hash, fetch func() ([]byte, error)) ([]byte, error) {
	b, err := p.objects.get(r.repo.Name(), d, func() ([]byte, error) {
		if b, ok := p.cache.get(d); ok {
			return b, nil
		}
		b, err := fetch()
		if err != nil {
			return nil, err
		}
		if err := p.cache.put(d, b); err != nil {
			p.log.Debug("not cached", "digest", d.String(), "err", err)
		}
		return b, nil
	})
	var wrong *wrongBytesError
	if errors.As(err, &wrong) {
		return nil, verdict.Unavailable("registry "+r.repo.RegistryStr(), fmt.Errorf("resolving %s: %w", r.given, err))
	}
	return b, err
}
