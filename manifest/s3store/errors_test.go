package s3store_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/s3store"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// failingPuts passes calls to a real (gofakes3) client, except channel
// writes, which fail with status for as long as fail says.
type failingPuts struct {
	s3store.API
	status int
	fail   func(n int64) bool
	n      atomic.Int64
}

func (f *failingPuts) PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if strings.Contains(aws.ToString(in.Key), "/channels/") && f.fail(f.n.Add(1)) {
		return nil, &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: f.status}}, Err: errors.New(http.StatusText(f.status))}
	}
	return f.API.PutObject(ctx, in, opts...)
}

func TestMoveOnConflicts(t *testing.T) {
	ctx := context.Background()
	m1, m2 := storetest.Manifest(t, "web", 1, ""), storetest.Manifest(t, "web", 2, "")
	for _, tc := range []struct {
		name   string
		status int
		fail   func(int64) bool
		check  func(t *testing.T, p *manifest.Pointer, err error)
	}{
		{"409 once, then decided again", http.StatusConflict, func(n int64) bool { return n == 2 }, func(t *testing.T, p *manifest.Pointer, err error) {
			if err != nil || p.Generation != 2 {
				t.Errorf("Move after one 409 = %+v, %v; want generation 2", p, err)
			}
		}},
		{"412 every time, bounded", http.StatusPreconditionFailed, func(n int64) bool { return n > 1 }, func(t *testing.T, p *manifest.Pointer, err error) {
			var ce *manifest.ConflictError
			if !errors.As(err, &ce) || ce.Attempts != 3 {
				t.Errorf("Move under endless 412s = %v, want a ConflictError after 3 attempts", err)
			}
		}},
		{"500 is not a conflict", http.StatusInternalServerError, func(n int64) bool { return n > 1 }, func(t *testing.T, p *manifest.Pointer, err error) {
			var ce *manifest.ConflictError
			if err == nil || errors.As(err, &ce) {
				t.Errorf("Move on a 500 = %v, want the server error", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := fakeTarget(t)
			api := &failingPuts{API: tg.api, status: tc.status, fail: tc.fail}
			st, err := s3store.New(api, tg.bucket, "", s3store.WithMaxMoveAttempts(3))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.Publish(ctx, st, m1, "production", "ci"); err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, m2); err != nil {
				t.Fatal(err)
			}
			p, err := st.Move(ctx, "production", m2, "ci")
			tc.check(t, p, err)
			if tc.name != "409 once, then decided again" {
				if cur, _ := st.Channel(ctx, "web", "production"); cur.Generation != 1 {
					t.Errorf("the channel moved to %d on a failed write", cur.Generation)
				}
			}
		})
	}
}
