package prune_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/s3store"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/prune"
	"github.com/lockstep-dev/lockstep/prune/s3origin"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

// origin is one origin under test: the prune.Origin, a way to upload to
// it, and the CDN base that serves it (for cdn.Check).
type origin struct {
	prune.Origin
	put func(t *testing.T, key, body string)
	cdn string
}

func dirOrigin(t *testing.T) origin {
	dir := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return origin{
		Origin: prune.Dir(dir),
		put: func(t *testing.T, key, body string) {
			p := filepath.Join(dir, filepath.FromSlash(key))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		cdn: srv.URL + "/",
	}
}

func s3Client(endpoint, ak, sk string) *s3.Client {
	tc := transport.New(transport.DefaultPolicy())
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(ak, sk, ""),
		HTTPClient:  &http.Client{Transport: tc.Transport()},
		Retryer:     s3store.Retryer(tc.Policy()),
	})
}

var bucketSeq atomic.Int64

// s3Target makes a bucket on endpoint and an origin under a prefix of it,
// served to cdn.Check by a proxy that GETs the object through the SDK.
func s3Target(t *testing.T, api *s3.Client, bucket string) origin {
	ctx := context.Background()
	if _, err := api.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("creating bucket: %v", err)
	}
	const prefix = "site/v1"
	o, err := s3origin.New(api, bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := api.GetObject(r.Context(), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String(prefix + r.URL.Path)})
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer out.Body.Close()
		w.Header().Set("Content-Length", fmt.Sprint(aws.ToInt64(out.ContentLength)))
		if r.Method != http.MethodHead {
			io.Copy(w, out.Body)
		}
	}))
	t.Cleanup(srv.Close)
	return origin{
		Origin: o,
		put: func(t *testing.T, key, body string) {
			if _, err := api.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(prefix + "/" + key), Body: bytes.NewReader([]byte(body))}); err != nil {
				t.Fatal(err)
			}
		},
		cdn: srv.URL + "/",
	}
}

func fakeS3Origin(t *testing.T) origin {
	srv := httptest.NewServer(gofakes3.New(s3mem.New(), gofakes3.WithAutoBucket(true)).Server())
	t.Cleanup(srv.Close)
	return s3Target(t, s3Client(srv.URL, "AK", "SK"), "origin")
}

// radosgwOrigin is Ceph's radosgw from LOCKSTEP_TEST_S3_ENDPOINT
// (scripts/test.sh starts it); without one it skips, or fails under
// LOCKSTEP_INTEGRATION=1.
func radosgwOrigin(t *testing.T) origin {
	ep, ak, sk := testenv.S3(t)
	return s3Target(t, s3Client(ep, ak, sk), fmt.Sprintf("lockstep-prune-%d-%d", os.Getpid(), bucketSeq.Add(1)))
}

// nginxOrigin is the directory origin served by a real nginx (skipped
// without one, failed under LOCKSTEP_INTEGRATION=1).
func nginxOrigin(t *testing.T) origin {
	o := dirOrigin(t)
	o.cdn = testenv.Nginx(t, o.Origin.(*prune.DirOrigin).String()) + "/"
	return o
}

var origins = map[string]func(*testing.T) origin{"dir": dirOrigin, "dir+nginx": nginxOrigin, "gofakes3": fakeS3Origin, "radosgw": radosgwOrigin}

// site is one release's store and origin.
type site struct {
	t   *testing.T
	st  manifest.Store
	o   origin
	gen map[int64]*manifest.Signed
}

func newSite(t *testing.T, o origin) *site {
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &site{t: t, st: st, o: o, gen: map[int64]*manifest.Signed{}}
}

// manifest records generation gen of "web" with the given assets (path:
// content) served from the site's CDN; it uploads and stores nothing.
func (s *site) manifest(gen int64, files map[string]string) *manifest.Signed {
	s.t.Helper()
	var fs []manifest.File
	for _, p := range slices.Sorted(maps.Keys(files)) {
		sum := sha256.Sum256([]byte(files[p]))
		fs = append(fs, manifest.File{Path: p, Size: int64(len(files[p])), SHA256: hex.EncodeToString(sum[:])})
	}
	hexOf := func(x string) string { h := sha256.Sum256([]byte(x)); return hex.EncodeToString(h[:]) }
	key := fmt.Sprint("web/", gen)
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "web", Generation: gen, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(gen) * time.Minute)},
		Images: []manifest.Image{{
			Name: "web", Ref: "registry.test/web:v" + fmt.Sprint(gen), Repository: "registry.test/web", Tag: "v" + fmt.Sprint(gen),
			Digest: manifest.MustParseDigest("sha256:" + hexOf("index "+key)), MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64",
				Digest: manifest.MustParseDigest("sha256:" + hexOf("manifest "+key)), Config: manifest.MustParseDigest("sha256:" + hexOf("config "+key))}},
		}},
		Assets: manifest.Assets{CDN: []string{s.o.cdn}, Files: fs, Fingerprint: manifest.Fingerprint(fs)},
	}
	raw, err := m.Indent()
	if err != nil {
		s.t.Fatal(err)
	}
	sg, err := manifest.NewSigned(raw, "test")
	if err != nil {
		s.t.Fatal(err)
	}
	s.gen[gen] = sg
	return sg
}

// upload puts a generation's assets on the origin.
func (s *site) upload(m *manifest.Signed, files map[string]string) {
	for _, f := range m.Manifest.Assets.Files {
		s.o.put(s.t, f.Path, files[f.Path])
	}
}

// publish is the pipeline: upload every asset, then store the manifest
// and move production to it.
func (s *site) publish(gen int64, files map[string]string) {
	s.t.Helper()
	m := s.manifest(gen, files)
	s.upload(m, files)
	if _, err := store.Publish(context.Background(), s.st, m, "production", "test"); err != nil {
		s.t.Fatal(err)
	}
	s.check(gen)
}

// check is `cdn check` of generation gen: every asset on the CDN, byte
// for byte.
func (s *site) check(gen int64) {
	s.t.Helper()
	rep, err := cdn.Check(context.Background(), s.gen[gen].Manifest.Assets, cdn.Options{Client: transport.New(transport.DefaultPolicy()), Full: true})
	if err != nil {
		s.t.Fatalf("cdn check of generation %d: %v", gen, err)
	}
	if err := rep.Err(); err != nil {
		s.t.Fatalf("cdn check of generation %d: %v", gen, err)
	}
}

func keys(es []prune.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	slices.Sort(out)
	return out
}

func reasons(es []prune.Entry) map[string]string {
	out := map[string]string{}
	for _, e := range es {
		out[e.Key] = e.Reason
	}
	return out
}

func assets(gen int64, extra ...string) map[string]string {
	m := map[string]string{fmt.Sprintf("app-%d.js", gen): fmt.Sprintf("app of generation %d", gen)}
	for _, p := range extra {
		m[p] = "shared " + p
	}
	return m
}

// The rules, on every origin: with --keep 2 and production at 4, the
// assets of generations 1 and 2 go, except one that generation 3 shares,
// one that a fleet report shows running (generation 2) and one that no
// manifest lists; a dry run deletes nothing.
func TestRun(t *testing.T) {
	for name, newOrigin := range origins {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSite(t, newOrigin(t))
			s.publish(1, assets(1, "css/shared.css"))
			s.publish(2, assets(2))
			s.publish(3, assets(3, "css/shared.css"))
			s.publish(4, assets(4))
			s.o.put(t, "stray.txt", "uploaded by hand")

			dry, err := prune.Run(ctx, s.st, "web", s.o, prune.Options{GCOptions: store.GCOptions{Keep: 2}})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := keys(dry.Deleted), []string{"app-1.js", "app-2.js"}; !slices.Equal(got, want) || !dry.DryRun {
				t.Fatalf("dry run would delete %v (dryRun %v), want %v", got, dry.DryRun, want)
			}
			r := reasons(dry.Kept)
			if r["css/shared.css"] != prune.KeptListed || r["stray.txt"] != prune.KeptUnknown || r["app-3.js"] != prune.KeptListed {
				t.Errorf("kept = %v", r)
			}
			s.check(1) // a dry run deletes nothing

			o := prune.Options{GCOptions: store.GCOptions{Keep: 2, Delete: true}}
			report := fmt.Sprintf(`{"inUse":[{"manifestDigest":%q}],"unreachable":[{"name":"i-1","release":"web","generation":2}]}`, s.gen[4].Digest)
			if err := o.AddReport([]byte(report)); err != nil {
				t.Fatal(err)
			}
			rep, err := prune.Run(ctx, s.st, "web", s.o, o)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := keys(rep.Deleted), []string{"app-1.js"}; !slices.Equal(got, want) {
				t.Fatalf("deleted %v, want %v", got, want)
			}
			for g := int64(2); g <= 4; g++ {
				s.check(g)
			}
			objs, err := s.o.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, ob := range objs {
				left = append(left, ob.Key)
			}
			slices.Sort(left)
			if want := []string{"app-2.js", "app-3.js", "app-4.js", "css/shared.css", "stray.txt"}; !slices.Equal(left, want) {
				t.Errorf("origin holds %v, want %v", left, want)
			}

			// Generation 3 goes out of the newest 2: the shared asset
			// survives until neither generation is kept, and
			// --prune-unknown takes the stray.
			s.publish(5, assets(5))
			s.publish(6, assets(6))
			rep, err = prune.Run(ctx, s.st, "web", s.o, prune.Options{GCOptions: store.GCOptions{Keep: 2, Delete: true}, PruneUnknown: true})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := keys(rep.Deleted), []string{"app-2.js", "app-3.js", "app-4.js", "css/shared.css", "stray.txt"}; !slices.Equal(got, want) {
				t.Fatalf("deleted %v, want %v", got, want)
			}
			s.check(5)
			s.check(6)
		})
	}
}

// A concurrent publish never leaves a live generation's asset missing:
// the pipeline publishes generation 5, which reuses generation 1's asset,
// at the worst moments of a prune (checked with cdn check after each).
func TestConcurrentPublish(t *testing.T) {
	for name, newOrigin := range origins {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSite(t, newOrigin(t))
			for g := int64(1); g <= 4; g++ {
				s.publish(g, assets(g))
			}
			reused := assets(5, "app-1.js")
			reused["app-1.js"] = "app of generation 1"

			// Stored and published after prune planned, before it deletes.
			var once bool
			hooked := &hookStore{Store: s.st, onList: func() {
				if !once {
					once = true
					s.publish(5, reused)
				}
			}}
			rep, err := prune.Run(ctx, hooked, "web", s.o, prune.Options{GCOptions: store.GCOptions{Keep: 1, Delete: true}})
			if err != nil {
				t.Fatal(err)
			}
			if r := reasons(rep.Kept)["app-1.js"]; r != prune.KeptNewer {
				t.Errorf("app-1.js kept for %q, want %q (deleted: %v)", r, prune.KeptNewer, keys(rep.Deleted))
			}
			s.check(5)

			// Uploaded again after prune listed the origin, its manifest
			// not yet stored when prune deletes: the object changed, so
			// it stays; then the pipeline publishes.
			s.o.put(t, "app-1.js", "app of generation 1") // generation 5 goes out below
			for g := int64(6); g <= 7; g++ {
				s.publish(g, assets(g))
			}
			again := assets(8, "app-1.js")
			again["app-1.js"] = "app of generation 1"
			m8 := s.manifest(8, again)
			once, hooked.lists = false, 0
			hooked.onList = func() {
				if !once {
					once = true
					if !strings.HasPrefix(name, "dir") {
						time.Sleep(1100 * time.Millisecond) // S3 times are to the second
					}
					s.upload(m8, again)
				}
			}
			rep, err = prune.Run(ctx, hooked, "web", s.o, prune.Options{GCOptions: store.GCOptions{Keep: 1, Delete: true}})
			if err != nil {
				t.Fatal(err)
			}
			if r := reasons(rep.Kept)["app-1.js"]; r != prune.KeptChanged {
				t.Errorf("app-1.js kept for %q, want %q (deleted: %v)", r, prune.KeptChanged, keys(rep.Deleted))
			}
			s.check(7)
			if _, err := store.Publish(ctx, s.st, m8, "production", "test"); err != nil {
				t.Fatal(err)
			}
			s.check(8)
		})
	}
}

// hookStore calls onList before each List: the moments prune re-reads.
type hookStore struct {
	manifest.Store
	onList func()
	lists  int
}

func (h *hookStore) List(ctx context.Context, release string) ([]manifest.Digest, error) {
	h.lists++
	if h.lists > 1 { // the first List is the plan's
		h.onList()
	}
	return h.Store.List(ctx, release)
}

// brokenStore fails Get of one manifest.
type brokenStore struct {
	manifest.Store
	bad manifest.Digest
}

func (b brokenStore) Get(ctx context.Context, release string, d manifest.Digest) (*manifest.Signed, error) {
	if d == b.bad {
		return nil, errors.New("disk on fire")
	}
	return b.Store.Get(ctx, release, d)
}

// It fails closed: an unreadable manifest (one gc left, or any other) is
// exit 3 with nothing deleted; a kept generation's asset missing from the
// origin (the wrong --origin, or skew already there) is exit 1 with
// nothing deleted; a bad option is exit 2.
func TestFailsClosed(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, dirOrigin(t))
	for g := int64(1); g <= 3; g++ {
		s.publish(g, assets(g))
	}
	all := prune.Options{GCOptions: store.GCOptions{Keep: 1, Delete: true}}

	_, err := prune.Run(ctx, brokenStore{s.st, s.gen[1].Digest}, "web", s.o, all)
	if !verdict.IsUnavailable(err) {
		t.Errorf("unreadable manifest: err = %v, want unavailable", err)
	}
	s.check(1)

	missing := newSite(t, dirOrigin(t))
	missing.st = s.st // the store's generation 3 lists app-3.js, not there
	rep, err := prune.Run(ctx, s.st, "web", missing.o, all)
	if !verdict.IsMismatch(err) || rep == nil || len(rep.Missing) != 1 || rep.Missing[0].Key != "app-3.js" || len(rep.Deleted) != 0 {
		t.Errorf("missing kept asset: rep %+v, err %v; want a mismatch naming app-3.js", rep, err)
	}

	var oe *verdict.OptionError
	if _, err := prune.Run(ctx, s.st, "web", s.o, prune.Options{OlderThan: -time.Second}); !errors.As(err, &oe) || oe.Option != "OlderThan" {
		t.Errorf("OlderThan < 0: err = %v", err)
	}
	if _, err := prune.Run(ctx, s.st, "web", s.o, prune.Options{GCOptions: store.GCOptions{Keep: -1}}); !errors.As(err, &oe) || oe.Option != "Keep" {
		t.Errorf("Keep < 0: err = %v", err)
	}
	s.check(1)
}

// OlderThan keeps the generations created within it and the objects
// modified within it.
func TestOlderThan(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, dirOrigin(t))
	for g := int64(1); g <= 3; g++ {
		s.publish(g, assets(g))
	}
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for g := 1; g <= 3; g++ {
		if err := os.Chtimes(filepath.Join(s.o.Origin.(*prune.DirOrigin).String(), fmt.Sprintf("app-%d.js", g)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	s.o.put(t, "stray.txt", "new")
	// Generation g was created at 2026-01-01 00:0g; stray.txt now.
	now := func() time.Time { return time.Date(2026, 1, 1, 0, 3, 30, 0, time.UTC) }
	rep, err := prune.Run(ctx, s.st, "web", s.o, prune.Options{GCOptions: store.GCOptions{Keep: 1}, OlderThan: 2 * time.Minute, Now: now, PruneUnknown: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(rep.Deleted), []string{"app-1.js"}; !slices.Equal(got, want) {
		t.Errorf("would delete %v, want %v", got, want)
	}
	if r := reasons(rep.Kept); r["app-2.js"] != prune.KeptListed || r["stray.txt"] != prune.KeptRecent {
		t.Errorf("kept %v", r)
	}
	for _, g := range rep.Generations {
		if g.Generation == 2 && g.Reason != prune.KeptYoung {
			t.Errorf("generation 2 kept for %q, want %q", g.Reason, prune.KeptYoung)
		}
	}
	// Without OlderThan, both old generations' assets and the stray go.
	rep, err = prune.Run(ctx, s.st, "web", s.o, prune.Options{GCOptions: store.GCOptions{Keep: 1}, PruneUnknown: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(rep.Deleted), []string{"app-1.js", "app-2.js", "stray.txt"}; !slices.Equal(got, want) {
		t.Errorf("would delete %v, want %v", got, want)
	}
}
