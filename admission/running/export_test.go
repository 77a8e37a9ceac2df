package running

import (
	"context"
	"fmt"

	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// ResolvePlatform is resolvePlatform over blobs, for the tests: the
// manifest and config digests and the platform of target's platform image
// whose layers chain to chain.
func ResolvePlatform(ctx context.Context, blobs map[digest.Digest][]byte, target ocispec.Descriptor, chain digest.Digest) (manifest, config digest.Digest, platform string, err error) {
	pi, err := resolvePlatform(ctx, mapStore(blobs), target, chain)
	if err != nil {
		return "", "", "", err
	}
	return pi.manifest, pi.config, pi.platform, nil
}

// mapStore is a content store of blobs by digest.
type mapStore map[digest.Digest][]byte

func (m mapStore) readBlob(_ context.Context, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	b, ok := m[desc.Digest]
	if !ok {
		return nil, errdefs.ErrNotFound
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("blob %s: over %d bytes", desc.Digest, limit)
	}
	return b, nil
}
