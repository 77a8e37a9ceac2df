package running

import (
	"bytes"
	"context"

	"github.com/containerd/containerd/v2/core/content"
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

func (m mapStore) ReaderAt(_ context.Context, desc ocispec.Descriptor) (content.ReaderAt, error) {
	b, ok := m[desc.Digest]
	if !ok {
		return nil, errdefs.ErrNotFound
	}
	return readerAt{bytes.NewReader(b)}, nil
}

type readerAt struct{ *bytes.Reader }

func (readerAt) Close() error { return nil }
