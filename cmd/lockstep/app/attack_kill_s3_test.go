package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/s3store"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// s3Layout is every key a release's objects may have (s3store's doc).
var s3Layout = regexp.MustCompile(`^lockstep/web/(manifests/sha256:[0-9a-f]{64}\.(json|sig|sigstore\.json)|channels/[a-z0-9-]+\.json)$`)

// Class 9 of issue 35 on the S3 store (real Ceph radosgw): kill -9 at any
// point of a publish leaves the store consistent. The real CLI publish runs
// in a child process against the bucket, killed with SIGKILL after a random
// delay, again and again. After each kill: every object of the bucket has
// a key of the store's layout (no temporary or other object), every
// manifest object is whole (its bytes hash to the digest its key names:
// S3 makes an object visible only once its PUT completed), every stored
// manifest reads, the channel names one that reads and verifies; and the
// next publish works and moves the channel.
func TestAttackKillPublishS3(t *testing.T) {
	t.Parallel()
	env := useRadosgw(t)
	ctx := context.Background()
	api, err := newS3Client(ctx, envMap(env), nil)
	if err != nil {
		t.Fatal(err)
	}
	bucket := fmt.Sprintf("lockstep-kill-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if _, err := api.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("creating bucket: %v", err)
	}
	url := "s3://" + bucket + "/lockstep"
	st, err := s3store.New(api, bucket, "lockstep")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := func(from int64, n int) []string { return manifestFiles(t, dir, from, n) }
	// consistent checks the bucket as a reader finds it after a kill.
	consistent := func(t *testing.T, round int) {
		t.Helper()
		objs := (&s3AttackEnv{api: api, bucket: bucket}).objects(t)
		for key, sum := range objs {
			if !s3Layout.MatchString(key) {
				t.Errorf("round %d: an object outside the store's layout: %s", round, key)
				continue
			}
			if name, ok := strings.CutPrefix(key, "lockstep/web/manifests/"); ok && strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".sigstore.json") {
				// Get checks that the bytes are a manifest of the digest
				// the key names.
				d, err := manifest.ParseDigest(strings.TrimSuffix(name, ".json"))
				if err == nil {
					_, err = st.Get(ctx, "web", d)
				}
				if err != nil {
					t.Errorf("round %d: manifest object %s (sha256 of its bytes %s) is not whole: %v", round, key, sum, err)
				}
			}
		}
		if _, unread, err := store.Retain(ctx, st, "web", store.GCOptions{}); err != nil || len(unread) > 0 {
			t.Errorf("round %d: a stored manifest does not read: %v %v", round, err, unread)
		}
		p, err := st.Channel(ctx, "web", "production")
		if err != nil {
			if round == 0 {
				return // killed before its first publish moved the channel
			}
			t.Fatalf("round %d: the channel: %v", round, err)
		}
		s, err := st.Get(ctx, "web", p.Digest)
		if err != nil {
			t.Fatalf("round %d: the live manifest %s: %v", round, p.Digest, err)
		}
		m, err := manifest.Parse(s.Raw)
		var d manifest.Digest
		if err == nil {
			d, err = m.Digest()
		}
		if err != nil || d != p.Digest || s.Digest != p.Digest || m.Release.Generation != p.Generation {
			t.Errorf("round %d: the live manifest does not verify against its channel (%+v): %v", round, p, err)
		}
	}

	const rounds, perChild = 8, 15
	next, published, last := int64(1), int64(0), int64(0)
	for round := range rounds {
		fs := files(next, perChild)
		next += perChild
		killedPublish(t, env, url, fs, time.Duration(300+rand.IntN(250*(round+1)))*time.Millisecond)
		consistent(t, round)
		if p, err := st.Channel(ctx, "web", "production"); err == nil {
			published += p.Generation - last // the child's generations follow last
		}

		// The next publish, as the pipeline retries it.
		g := next
		next++
		if code, out, errs := runIn(t, env, "publish", "--allow-unsigned", "--store", url, files(g, 1)[0]); code != 0 {
			t.Fatalf("round %d: the publish after the kill: exit %d\n%s\n%s", round, code, out, errs)
		}
		p, err := st.Channel(ctx, "web", "production")
		if err != nil || p.Generation != g {
			t.Fatalf("round %d: the channel after the next publish: %+v, %v; want generation %d", round, p, err, g)
		}
		consistent(t, round+1)
		last = g
	}
	n := len((&s3AttackEnv{api: api, bucket: bucket}).objects(t))
	t.Logf("%d rounds of kills on radosgw; the killed children published %d manifests before their kill; %d objects, every one whole and of the store's layout", rounds, published, n)
}
