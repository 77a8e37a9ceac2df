package s3store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lockstep-dev/lockstep/manifest"
)

// blobs is the bucket's objects as blobstore.Blobs: a blob's name is its
// key.
type blobs struct{ s *Store }

func (b blobs) Name(release string, d manifest.Digest) (string, error) {
	return b.s.manifestKey(release, d)
}

// Create writes an object with If-None-Match: *; a failed precondition
// (the object is there) wraps fs.ErrExist.
func (b blobs) Create(ctx context.Context, key string, data []byte) error {
	_, err := b.s.put(ctx, key, data, "", true)
	if isPrecondition(err) {
		return fmt.Errorf("%w: %w", fs.ErrExist, err)
	}
	return err
}

// Replace writes an object unconditionally.
func (b blobs) Replace(ctx context.Context, key string, data []byte) error {
	_, err := b.s.put(ctx, key, data, "", false)
	return err
}

// Delete removes an object; one that is not there is not an error.
func (b blobs) Delete(ctx context.Context, key string) error {
	_, err := b.s.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.s.bucket), Key: aws.String(key)})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting s3://%s/%s: %w", b.s.bucket, key, err)
	}
	return nil
}

func (b blobs) Stored(ctx context.Context, release string, d manifest.Digest) (*manifest.Signed, error) {
	signed, _, err := b.s.getManifest(ctx, release, d)
	return signed, err
}

func (b blobs) List(ctx context.Context, release, dir string) ([]string, error) {
	rk, err := b.s.releaseKey(release)
	if err != nil {
		return nil, err
	}
	return b.s.list(ctx, rk+dir+"/")
}

func contentType(key string, data []byte) string {
	switch {
	case strings.Contains(key, "/channels/"), strings.HasSuffix(key, manifest.BundleSuffix):
		return "application/json"
	case strings.HasSuffix(key, manifest.SignatureSuffix):
		return "text/plain"
	case strings.Contains(key, "/manifests/"):
		// The media type of the manifest's version. Its apiVersion is
		// the first key of a manifest lockstep wrote (keys are sorted),
		// so reading up to it does not decode the whole document again.
		if mt := manifest.MediaTypeOf(apiVersion(data)); mt != "" {
			return mt
		}
		return manifest.MediaType
	}
	return "application/json"
}

// apiVersion returns the top-level "apiVersion" of a JSON document, read
// key by key up to it; "" when there is none or the document is not an
// object.
func apiVersion(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		var v json.RawMessage
		if key != "apiVersion" {
			if dec.Decode(&v) != nil {
				return ""
			}
			continue
		}
		var s string
		if dec.Decode(&s) != nil {
			return ""
		}
		return s
	}
	return ""
}
