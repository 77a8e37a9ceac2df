package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/s3store"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// client returns a real SDK client for an S3-compatible endpoint, sending
// on internal/transport as cmd/ does.
func client(endpoint, ak, sk string) *s3.Client {
	tc := transport.New(transport.DefaultPolicy())
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(ak, sk, ""),
		HTTPClient:   &http.Client{Transport: tc.Transport()},
		Retryer:      s3store.Retryer(tc.Policy()),
	})
}

// fake is the fast unit fake: gofakes3 v1.2.0, an in-process Go S3 server
// that enforces If-None-Match and If-Match on PUT (not If-Match on GET,
// which the store does not use).
type fake struct {
	backend *s3mem.Backend
	url     string
}

func newFake(t *testing.T) *fake {
	b := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(b, gofakes3.WithAutoBucket(true)).Server())
	t.Cleanup(srv.Close)
	return &fake{backend: b, url: srv.URL}
}

var bucketSeq atomic.Int64

// target is an S3 endpoint with a fresh bucket for one test.
type target struct {
	api    *s3.Client
	bucket string
}

func (tg target) store(t *testing.T, opts ...s3store.Option) *s3store.Store {
	st, err := s3store.New(tg.api, tg.bucket, "lockstep/test", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (tg target) raw(prefix string) storetest.Raw {
	return storetest.Raw{
		Write: func(key string, data []byte) error {
			_, err := tg.api.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &tg.bucket, Key: aws.String(prefix + key), Body: bytes.NewReader(data)})
			return err
		},
		Read: func(key string) ([]byte, error) {
			out, err := tg.api.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &tg.bucket, Key: aws.String(prefix + key)})
			if err != nil {
				return nil, err
			}
			defer out.Body.Close()
			return io.ReadAll(out.Body)
		},
	}
}

func fakeTarget(t *testing.T) target {
	f := newFake(t)
	tg := target{api: client(f.url, "AK", "SK"), bucket: "lockstep"}
	if _, err := tg.api.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &tg.bucket}); err != nil {
		t.Fatal(err)
	}
	return tg
}

// radosgwTarget is Ceph's radosgw from LOCKSTEP_TEST_S3_ENDPOINT (scripts/
// test.sh starts it with scripts/radosgw.sh), with a bucket of the test's
// own. Without an endpoint it skips, or fails under LOCKSTEP_INTEGRATION=1.
func radosgwTarget(t *testing.T) target {
	ep := os.Getenv("LOCKSTEP_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("LOCKSTEP_INTEGRATION") == "1" {
			t.Fatal("LOCKSTEP_TEST_S3_ENDPOINT is not set (scripts/test.sh starts radosgw and sets it)")
		}
		t.Skip("no S3 server: set LOCKSTEP_TEST_S3_ENDPOINT (scripts/radosgw.sh start DIR)")
	}
	tg := target{
		api:    client(ep, os.Getenv("LOCKSTEP_TEST_S3_ACCESS_KEY"), os.Getenv("LOCKSTEP_TEST_S3_SECRET_KEY")),
		bucket: fmt.Sprintf("lockstep-test-%d-%d", os.Getpid(), bucketSeq.Add(1)),
	}
	if _, err := tg.api.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &tg.bucket}); err != nil {
		t.Fatalf("creating bucket on %s: %v", ep, err)
	}
	return tg
}

func TestContractFake(t *testing.T) {
	storetest.Run(t, func(t *testing.T) manifest.Store { return fakeTarget(t).store(t) })
}

func TestCorruptFake(t *testing.T) {
	storetest.RunCorrupt(t, func(t *testing.T) (manifest.Store, storetest.Raw) {
		tg := fakeTarget(t)
		return tg.store(t), tg.raw("lockstep/test/")
	})
}

func TestContractRadosgw(t *testing.T) {
	radosgwTarget(t) // skip or fail once, before the subtests
	storetest.Run(t, func(t *testing.T) manifest.Store { return radosgwTarget(t).store(t) }, storetest.Options{Publishers: 50})
}

func TestCorruptRadosgw(t *testing.T) {
	radosgwTarget(t)
	storetest.RunCorrupt(t, func(t *testing.T) (manifest.Store, storetest.Raw) {
		tg := radosgwTarget(t)
		return tg.store(t), tg.raw("lockstep/test/")
	})
}

// TestRadosgwETagQuoting pins the server behaviour the store's unquoted
// If-Match is chosen for: radosgw refuses a quoted ETag that matches, and
// accepts the unquoted one.
func TestRadosgwETagQuoting(t *testing.T) {
	tg := radosgwTarget(t)
	ctx := context.Background()
	key := aws.String("etag-probe")
	out, err := tg.api.PutObject(ctx, &s3.PutObjectInput{Bucket: &tg.bucket, Key: key, Body: strings.NewReader("one")})
	if err != nil {
		t.Fatal(err)
	}
	etag := aws.ToString(out.ETag)
	if !strings.HasPrefix(etag, `"`) {
		t.Fatalf("ETag %s: want the quoted form from the server", etag)
	}
	_, quotedErr := tg.api.PutObject(ctx, &s3.PutObjectInput{Bucket: &tg.bucket, Key: key, Body: strings.NewReader("two"), IfMatch: aws.String(etag)})
	_, unquotedErr := tg.api.PutObject(ctx, &s3.PutObjectInput{Bucket: &tg.bucket, Key: key, Body: strings.NewReader("two"), IfMatch: aws.String(strings.Trim(etag, `"`))})
	if unquotedErr != nil {
		t.Errorf("If-Match with the unquoted ETag: %v, want success", unquotedErr)
	}
	t.Logf("radosgw: If-Match quoted → %v; unquoted → %v", quotedErr, unquotedErr)
}

// recordingAPI records the If-Match values sent and, for a context marked
// stall, holds the channel write until released.
type recordingAPI struct {
	s3store.API
	mu      sync.Mutex
	ifMatch []string
	stalled chan struct{}
	release chan struct{}
}

type stallKey struct{}

func (r *recordingAPI) PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if strings.Contains(aws.ToString(in.Key), "/channels/") {
		if in.IfMatch != nil {
			r.mu.Lock()
			r.ifMatch = append(r.ifMatch, *in.IfMatch)
			r.mu.Unlock()
		}
		if ctx.Value(stallKey{}) != nil && r.stalled != nil {
			close(r.stalled)
			r.stalled = nil
			<-r.release
		}
	}
	return r.API.PutObject(ctx, in, opts...)
}

// TestStalePublisherInsideCAS stalls a publisher inside Move, after it read
// the pointer and decided, while five newer generations are published:
// its write (If-Match on the old ETag) fails, it re-reads and is refused,
// and the channel names the newest.
func TestStalePublisherInsideCAS(t *testing.T) {
	for name, newTarget := range map[string]func(*testing.T) target{"gofakes3": fakeTarget, "radosgw": radosgwTarget} {
		t.Run(name, func(t *testing.T) {
			tg := newTarget(t)
			api := &recordingAPI{API: tg.api, stalled: make(chan struct{}), release: make(chan struct{})}
			st, err := s3store.New(api, tg.bucket, "stale")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := store.Publish(ctx, st, storetest.Manifest(t, "web", 1, ""), "production", "ci"); err != nil {
				t.Fatal(err)
			}
			stalled := api.stalled
			stale := storetest.Manifest(t, "web", 2, "stale")
			errc := make(chan error, 1)
			go func() {
				_, err := store.Publish(context.WithValue(ctx, stallKey{}, true), st, stale, "production", "stale")
				errc <- err
			}()
			<-stalled
			var newest *manifest.Signed
			for g := int64(2); g <= 6; g++ {
				newest = storetest.Manifest(t, "web", g, "fresh")
				if _, err := store.Publish(ctx, st, newest, "production", "ci"); err != nil {
					t.Fatalf("publishing %d: %v", g, err)
				}
			}
			close(api.release)
			err = <-errc
			var ge *manifest.GenerationError
			if !errors.As(err, &ge) || ge.Have != 6 || ge.Offered != 2 {
				t.Fatalf("stale publisher = %v, want a GenerationError (have 6, offered 2)", err)
			}
			p, err := st.Channel(ctx, "web", "production")
			if err != nil {
				t.Fatal(err)
			}
			if p.Generation != 6 || p.Digest != newest.Digest {
				t.Errorf("channel = generation %d, want 6", p.Generation)
			}
			for _, v := range api.ifMatch {
				if strings.Contains(v, `"`) {
					t.Errorf("If-Match %s sent quoted; the store sends ETags unquoted", v)
				}
			}
			if len(api.ifMatch) < 6 {
				t.Errorf("%d conditional channel writes, want at least 6", len(api.ifMatch))
			}
		})
	}
}

func BenchmarkGofakes3(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) manifest.Store {
		return benchTarget(b, newFakeURL(b), "AK", "SK")
	})
}

func BenchmarkRadosgw(b *testing.B) {
	ep := os.Getenv("LOCKSTEP_TEST_S3_ENDPOINT")
	if ep == "" {
		b.Skip("no S3 server: set LOCKSTEP_TEST_S3_ENDPOINT")
	}
	storetest.Bench(b, func(b *testing.B) manifest.Store {
		return benchTarget(b, ep, os.Getenv("LOCKSTEP_TEST_S3_ACCESS_KEY"), os.Getenv("LOCKSTEP_TEST_S3_SECRET_KEY"))
	})
}

func newFakeURL(b *testing.B) string {
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	b.Cleanup(srv.Close)
	return srv.URL
}

func benchTarget(b *testing.B, endpoint, ak, sk string) manifest.Store {
	api := client(endpoint, ak, sk)
	bucket := fmt.Sprintf("lockstep-bench-%d-%d", os.Getpid(), bucketSeq.Add(1))
	if _, err := api.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		b.Fatal(err)
	}
	st, err := s3store.New(api, bucket, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return st
}
