// Package s3origin is a prune.Origin in an S3 bucket under a prefix, on
// aws-sdk-go-v2 (the client built by the caller, as manifest/s3store's).
package s3origin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/lockstep-dev/lockstep/prune"
)

// API is the part of the S3 client the origin uses; *s3.Client
// implements it.
type API interface {
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

var _ API = (*s3.Client)(nil)

// Origin is the objects of a bucket under a prefix.
type Origin struct {
	api    API
	bucket string
	prefix string // "" or ending in "/"
}

var _ prune.Origin = (*Origin)(nil)

// New returns the origin in bucket under prefix ("" for the bucket's
// root).
func New(api API, bucket, prefix string) (*Origin, error) {
	if bucket == "" {
		return nil, errors.New("s3origin: no bucket")
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &Origin{api: api, bucket: bucket, prefix: prefix}, nil
}

// String returns s3://BUCKET/PREFIX.
func (o *Origin) String() string { return "s3://" + o.bucket + "/" + strings.TrimSuffix(o.prefix, "/") }

// List lists every object under the prefix, page by page.
func (o *Origin) List(ctx context.Context) ([]prune.Object, error) {
	var out []prune.Object
	p := s3.NewListObjectsV2Paginator(o.api, &s3.ListObjectsV2Input{Bucket: aws.String(o.bucket), Prefix: aws.String(o.prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", o, err)
		}
		for _, obj := range page.Contents {
			key := strings.TrimPrefix(aws.ToString(obj.Key), o.prefix)
			if key == "" || strings.HasSuffix(key, "/") {
				continue // a "directory" marker
			}
			out = append(out, prune.Object{Key: key, Size: aws.ToInt64(obj.Size), ModTime: aws.ToTime(obj.LastModified), Tag: aws.ToString(obj.ETag)})
		}
	}
	return out, nil
}

// Delete deletes ob if a HEAD still shows its listed ETag, size and
// modification time, to the second as HEAD gives it (prune.ErrChanged
// otherwise); a missing object is not an error. A writer between the HEAD
// and the DELETE is not seen: the delete is not conditional, as not every
// S3 server has conditional deletes.
func (o *Origin) Delete(ctx context.Context, ob prune.Object) error {
	key := o.prefix + ob.Key
	h, err := o.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(key)})
	if notFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading s3://%s/%s: %w", o.bucket, key, err)
	}
	if aws.ToString(h.ETag) != ob.Tag || aws.ToInt64(h.ContentLength) != ob.Size || !aws.ToTime(h.LastModified).Truncate(time.Second).Equal(ob.ModTime.Truncate(time.Second)) {
		return fmt.Errorf("deleting s3://%s/%s: %w", o.bucket, key, prune.ErrChanged)
	}
	if _, err := o.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(key)}); err != nil {
		return fmt.Errorf("deleting s3://%s/%s: %w", o.bucket, key, err)
	}
	return nil
}

func notFound(err error) bool {
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == 404
}
