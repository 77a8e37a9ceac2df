package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/blobstore"
)

// API is the part of the S3 client the store uses; *s3.Client implements
// it.
type API interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

var _ API = (*s3.Client)(nil)

// MaxMoveAttempts is the default bound on the compare-and-swap attempts of
// one Move: each lost attempt means another publisher moved the channel.
const MaxMoveAttempts = 64

// Store is a manifest.Store in an S3 bucket. It is safe for concurrent use.
type Store struct {
	api         API
	bucket      string
	prefix      string
	log         *slog.Logger
	now         func() time.Time
	maxAttempts int
}

var _ manifest.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithLogger sets the logger (default: none).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock sets the clock that stamps pointer moves (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithMaxMoveAttempts bounds the compare-and-swap attempts of one Move
// (default MaxMoveAttempts).
func WithMaxMoveAttempts(n int) Option { return func(s *Store) { s.maxAttempts = max(n, 1) } }

// New returns the store in bucket under prefix ("" for the bucket's root).
func New(api API, bucket, prefix string, opts ...Option) (*Store, error) {
	if bucket == "" {
		return nil, errors.New("s3store: no bucket")
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	s := &Store{api: api, bucket: bucket, prefix: prefix, log: slog.New(slog.DiscardHandler), now: time.Now, maxAttempts: MaxMoveAttempts}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

func (s *Store) String() string { return "s3://" + s.bucket + "/" + strings.TrimSuffix(s.prefix, "/") }

func (s *Store) releaseKey(release string) (string, error) {
	if err := manifest.ValidateName(release); err != nil {
		return "", fmt.Errorf("release name: %w", err)
	}
	return s.prefix + release + "/", nil
}

func (s *Store) manifestKey(release string, d manifest.Digest) (string, error) {
	rk, err := s.releaseKey(release)
	if err != nil {
		return "", err
	}
	if _, err := manifest.ParseDigest(d.String()); err != nil {
		return "", err
	}
	return rk + "manifests/" + d.String() + ".json", nil
}

func (s *Store) channelKey(release, channel string) (string, error) {
	rk, err := s.releaseKey(release)
	if err != nil {
		return "", err
	}
	if err := manifest.ValidateName(channel); err != nil {
		return "", fmt.Errorf("channel name: %w", err)
	}
	return rk + "channels/" + channel + ".json", nil
}

// Put stores s under its digest (blobstore.Put, creating objects with
// If-None-Match: *). See manifest.Store.
func (s *Store) Put(ctx context.Context, m *manifest.Signed) error {
	return blobstore.Put(ctx, blobs{s}, m, s.log)
}

// put writes an object: with ifMatch, only over that ETag; with ifNone,
// only if there is none. It returns the new ETag.
func (s *Store) put(ctx context.Context, key string, data []byte, ifMatch string, ifNone bool) (string, error) {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(data), // seekable: the SDK hashes it over plain http
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String(contentType(key, data)),
	}
	if ifMatch != "" {
		in.IfMatch = aws.String(unquote(ifMatch))
	}
	if ifNone {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := s.api.PutObject(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// unquote returns an ETag without its quotes: the form both AWS S3 and
// radosgw accept in If-Match (see the package doc).
func unquote(etag string) string {
	return strings.TrimSuffix(strings.TrimPrefix(etag, `"`), `"`)
}

// get reads an object, at most limit bytes. A missing object is
// manifest.ErrNotFound.
func (s *Store) get(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if isNotFound(err) {
		return nil, "", fmt.Errorf("%s: %w", key, manifest.ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading s3://%s/%s: %w", s.bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading s3://%s/%s: %w", s.bucket, key, err)
	}
	if int64(len(b)) > limit {
		return nil, "", fmt.Errorf("reading s3://%s/%s: over %d bytes", s.bucket, key, limit)
	}
	return b, aws.ToString(out.ETag), nil
}

// Get reads a manifest and its signature and bundle. See manifest.Store.
func (s *Store) Get(ctx context.Context, release string, d manifest.Digest) (*manifest.Signed, error) {
	signed, key, err := s.getManifest(ctx, release, d)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(key, ".json")
	if signed.Signature, err = s.getOptional(ctx, base+manifest.SignatureSuffix); err != nil {
		return nil, err
	}
	if signed.Bundle, err = s.getOptional(ctx, base+manifest.BundleSuffix); err != nil {
		return nil, err
	}
	return signed, nil
}

// getManifest reads and checks a manifest, without its sidecars, and
// returns its key.
func (s *Store) getManifest(ctx context.Context, release string, d manifest.Digest) (*manifest.Signed, string, error) {
	key, err := s.manifestKey(release, d)
	if err != nil {
		return nil, "", err
	}
	raw, _, err := s.get(ctx, key, manifest.MaxSize)
	if errors.Is(err, manifest.ErrNotFound) {
		return nil, "", fmt.Errorf("manifest %s of release %s: %w", d, release, manifest.ErrNotFound)
	}
	if err != nil {
		return nil, "", err
	}
	signed, err := manifest.CheckStored(raw, strings.TrimPrefix(key, s.prefix), release, d)
	if err != nil {
		return nil, "", err
	}
	signed.Location = "s3://" + s.bucket + "/" + key
	return signed, key, nil
}

func (s *Store) getOptional(ctx context.Context, key string) ([]byte, error) {
	b, _, err := s.get(ctx, key, manifest.MaxSidecarSize)
	if errors.Is(err, manifest.ErrNotFound) {
		return nil, nil
	}
	return b, err
}

// Channel reads a channel's pointer. See manifest.Store.
func (s *Store) Channel(ctx context.Context, release, channel string) (*manifest.Pointer, error) {
	p, _, err := s.readPointer(ctx, release, channel)
	return p, err
}

func (s *Store) readPointer(ctx context.Context, release, channel string) (*manifest.Pointer, string, error) {
	key, err := s.channelKey(release, channel)
	if err != nil {
		return nil, "", err
	}
	raw, etag, err := s.get(ctx, key, manifest.MaxPointerSize)
	if errors.Is(err, manifest.ErrNotFound) {
		return nil, "", fmt.Errorf("channel %s of release %s: %w", channel, release, manifest.ErrNotFound)
	}
	if err != nil {
		return nil, "", err
	}
	p, err := manifest.ParsePointer(raw, strings.TrimPrefix(key, s.prefix), release, channel)
	return p, etag, err
}

// Move points a channel at a stored manifest by compare-and-swap. See
// manifest.Store and the package doc.
func (s *Store) Move(ctx context.Context, channel string, m *manifest.Signed, by string) (*manifest.Pointer, error) {
	if m == nil || m.Manifest == nil {
		return nil, errors.New("moving a channel: no manifest")
	}
	release := m.Manifest.Release.Name
	key, err := s.channelKey(release, channel)
	if err != nil {
		return nil, err
	}
	checked := false
	for attempt := 1; attempt <= s.maxAttempts; attempt++ {
		cur, etag, err := s.readPointer(ctx, release, channel)
		if errors.Is(err, manifest.ErrNotFound) {
			cur = nil // a new channel: created only if still absent
		}
		next, err := blobstore.NextPointer(cur, err, channel, m, by, s.now())
		if err != nil {
			return nil, err
		}
		if !checked {
			// The generation is decided first: a manifest that gc took
			// meanwhile was below the channel, and that is the answer.
			if _, _, err := s.getManifest(ctx, release, m.Digest); err != nil {
				if errors.Is(err, manifest.ErrNotFound) {
					if now, _, perr := s.readPointer(ctx, release, channel); perr == nil {
						if _, gerr := manifest.NextPointer(now, channel, m, by, s.now()); gerr != nil {
							return nil, gerr
						}
					}
				}
				return nil, fmt.Errorf("moving channel %s: %w", channel, err)
			}
			checked = true
		}
		data, err := next.Encode()
		if err != nil {
			return nil, err
		}
		_, err = s.put(ctx, key, data, etag, cur == nil)
		if err == nil {
			if cur == nil {
				// A new channel is the one move that gc's generation rule
				// does not cover: make sure the manifest is still there.
				if err := s.ensure(ctx, m); err != nil {
					return nil, err
				}
			}
			s.log.Debug("moved channel", "release", release, "channel", channel, "generation", next.Generation, "digest", next.Digest, "attempts", attempt)
			return next, nil
		}
		if !isPrecondition(err) {
			return nil, fmt.Errorf("moving channel %s: %w", channel, err)
		}
		s.log.Debug("channel moved under us; re-reading", "release", release, "channel", channel, "attempt", attempt)
		if err := pause(ctx, attempt); err != nil {
			return nil, err
		}
	}
	return nil, &manifest.ConflictError{Release: release, Channel: channel, Attempts: s.maxAttempts}
}

// ensure stores m again if it is gone.
func (s *Store) ensure(ctx context.Context, m *manifest.Signed) error {
	_, _, err := s.getManifest(ctx, m.Manifest.Release.Name, m.Digest)
	if errors.Is(err, manifest.ErrNotFound) {
		s.log.Warn("manifest deleted while its channel was created; storing it again", "digest", m.Digest)
		return s.Put(ctx, m)
	}
	return err
}

// pause waits a random few milliseconds before re-reading a contended
// pointer (full jitter, capped at 50 ms).
func pause(ctx context.Context, attempt int) error {
	ceil := min(time.Millisecond<<min(attempt, 6), 50*time.Millisecond)
	t := time.NewTimer(time.Duration(rand.Int64N(int64(ceil))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// List returns a release's stored manifests, sorted. See manifest.Store.
func (s *Store) List(ctx context.Context, release string) ([]manifest.Digest, error) {
	return blobstore.List(ctx, blobs{s}, release)
}

// Channels returns a release's channel names, sorted. See manifest.Store.
func (s *Store) Channels(ctx context.Context, release string) ([]string, error) {
	return blobstore.Channels(ctx, blobs{s}, release)
}

// Releases returns the releases under the store's prefix (the key
// prefixes one level down), sorted. See manifest.Store.
func (s *Store) Releases(ctx context.Context) ([]string, error) {
	var out []string
	var token *string
	for {
		resp, err := s.api.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket:            aws.String(s.bucket),
			Prefix:            aws.String(s.prefix),
			Delimiter:         aws.String("/"),
			ContinuationToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", s.bucket, s.prefix, err)
		}
		for _, p := range resp.CommonPrefixes {
			n := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(p.Prefix), s.prefix), "/")
			if manifest.ValidateName(n) == nil {
				out = append(out, n)
			}
		}
		if !aws.ToBool(resp.IsTruncated) || resp.NextContinuationToken == nil {
			break
		}
		token = resp.NextContinuationToken
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// list returns the names of the "*.json" objects directly under prefix,
// without the extension, sorted.
func (s *Store) list(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	var token *string
	for {
		resp, err := s.api.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket:            aws.String(s.bucket),
			Prefix:            aws.String(prefix),
			ContinuationToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", s.bucket, prefix, err)
		}
		for _, o := range resp.Contents {
			rest := strings.TrimPrefix(aws.ToString(o.Key), prefix)
			if n, ok := strings.CutSuffix(rest, ".json"); ok && !strings.Contains(n, "/") {
				out = append(out, n)
			}
		}
		if !aws.ToBool(resp.IsTruncated) || resp.NextContinuationToken == nil {
			break
		}
		token = resp.NextContinuationToken
	}
	sort.Strings(out)
	return out, nil
}

// Delete removes a manifest and its signature and bundle. Deleting one
// that is not there is not an error. See manifest.Store.
func (s *Store) Delete(ctx context.Context, release string, d manifest.Digest) error {
	return blobstore.Delete(ctx, blobs{s}, release, d, s.log)
}

// statusCode returns the HTTP status of an S3 error, or 0.
func statusCode(err error) int {
	var sc interface{ HTTPStatusCode() int }
	if errors.As(err, &sc) {
		return sc.HTTPStatusCode()
	}
	return 0
}

func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	return errors.As(err, &nsk) || errors.As(err, &nf) || statusCode(err) == http.StatusNotFound
}

// isPrecondition reports a failed conditional write: 412, or 409
// (ConditionalRequestConflict, when AWS saw a concurrent conditional
// write).
func isPrecondition(err error) bool {
	c := statusCode(err)
	return c == http.StatusPreconditionFailed || c == http.StatusConflict
}
