package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/s3store"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// Class 1 of issue 35: cdn prune deletes only what nobody can load. The
// releases web and api share one origin (the AWS us-east-1 shape: one
// cleanup, several plans); every case runs the real CLI against real
// directories and, where LOCKSTEP_TEST_S3_ENDPOINT names it, Ceph's
// radosgw (S3 store and S3 origin), and asserts the exit code, the
// finding and what is left on the origin.

// pruneWorld is a store and an origin, as the CLI names them, with the
// test's own hands on both.
type pruneWorld struct {
	storeURL, originURL string
	st                  manifest.Store
	// put uploads an object to the origin; keys lists the origin.
	put  func(key string) error
	keys func(t *testing.T) []string
	// raw overwrites a store file (a manifest's, by its path under the
	// store) with data.
	raw func(t *testing.T, rel string, data []byte)
	// emptyStore is a store URL that holds nothing; missingStore one
	// that is not there.
	emptyStore, missingStore string
	// env is the environment of the CLI's runs (Run's env): the S3
	// server's for a radosgw world, nothing for a directory.
	env []string
}

func dirPruneWorld(t *testing.T) *pruneWorld {
	root := t.TempDir()
	sd, od := filepath.Join(root, "store"), filepath.Join(root, "origin")
	os.MkdirAll(od, 0o755)
	os.MkdirAll(filepath.Join(root, "empty"), 0o755)
	st, err := filestore.New(sd)
	if err != nil {
		t.Fatal(err)
	}
	return &pruneWorld{
		storeURL: sd, originURL: od, st: st,
		put: func(key string) error {
			p := filepath.Join(od, filepath.FromSlash(key))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			return os.WriteFile(p, []byte("0123456789"), 0o644)
		},
		keys: func(t *testing.T) []string {
			var out []string
			filepath.WalkDir(od, func(p string, e os.DirEntry, err error) error {
				if err == nil && !e.IsDir() {
					rel, _ := filepath.Rel(od, p)
					out = append(out, filepath.ToSlash(rel))
				}
				return nil
			})
			slices.Sort(out)
			return out
		},
		raw: func(t *testing.T, rel string, data []byte) {
			if err := os.WriteFile(filepath.Join(sd, filepath.FromSlash(rel)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		emptyStore: filepath.Join(root, "empty"), missingStore: filepath.Join(root, "none"),
	}
}

// pruneBuckets numbers the buckets of the package's radosgw worlds.
var pruneBuckets atomic.Int64

// useRadosgw is the environment of a run (Run's env; runIn) whose S3
// client reaches the radosgw of LOCKSTEP_TEST_S3_ENDPOINT (scripts/test.sh
// starts it) with its keys; the process's environment is not touched.
// Without one it skips, or fails under LOCKSTEP_INTEGRATION=1.
func useRadosgw(t *testing.T) []string {
	ep := os.Getenv("LOCKSTEP_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("LOCKSTEP_INTEGRATION") == "1" {
			t.Fatal("LOCKSTEP_TEST_S3_ENDPOINT is not set (scripts/test.sh starts radosgw and sets it)")
		}
		t.Skip("no S3 server: set LOCKSTEP_TEST_S3_ENDPOINT")
	}
	return s3RunEnv(ep, os.Getenv("LOCKSTEP_TEST_S3_ACCESS_KEY"), os.Getenv("LOCKSTEP_TEST_S3_SECRET_KEY"))
}

// radosgwPruneWorld is a world in a new bucket of radosgw (useRadosgw),
// whose runs and the test's own client have the environment extra too.
func radosgwPruneWorld(t *testing.T, extra ...string) *pruneWorld {
	env := append(useRadosgw(t), extra...)
	ctx := context.Background()
	api, err := newS3Client(ctx, envMap(env), nil)
	if err != nil {
		t.Fatal(err)
	}
	bucket := fmt.Sprintf("lockstep-prune-%d-%d-%d", os.Getpid(), pruneBuckets.Add(1), time.Now().UnixNano()%1e6)
	if _, err := api.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("creating bucket: %v", err)
	}
	st, err := s3store.New(api, bucket, "store")
	if err != nil {
		t.Fatal(err)
	}
	putObj := func(t *testing.T, key string, data []byte) {
		if _, err := api.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: bytes.NewReader(data)}); err != nil {
			t.Fatalf("putting %s: %v", key, err)
		}
	}
	return &pruneWorld{
		storeURL: "s3://" + bucket + "/store", originURL: "s3://" + bucket + "/origin", st: st,
		put: func(key string) error {
			_, err := api.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("origin/" + key), Body: bytes.NewReader([]byte("0123456789"))})
			return err
		},
		keys: func(t *testing.T) []string {
			var out []string
			p := s3.NewListObjectsV2Paginator(api, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("origin/")})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatalf("listing the origin: %v", err)
				}
				for _, o := range page.Contents {
					out = append(out, strings.TrimPrefix(aws.ToString(o.Key), "origin/"))
				}
			}
			slices.Sort(out)
			return out
		},
		raw:          func(t *testing.T, rel string, data []byte) { putObj(t, "store/"+rel, data) },
		emptyStore:   "s3://" + bucket + "/empty",
		missingStore: "s3://" + bucket + "-none/store",
		env:          env,
	}
}

// pruneManifest is generation gen of release listing files (10 bytes
// each, as put uploads them).
func pruneManifest(t *testing.T, release string, gen int64, files ...string) *manifest.Signed {
	t.Helper()
	sum := sha256.Sum256([]byte("0123456789"))
	var fs []manifest.File
	for _, f := range slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(files))))) {
		fs = append(fs, manifest.File{Path: f, Size: 10, SHA256: hex.EncodeToString(sum[:])})
	}
	hexOf := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	key := fmt.Sprint(release, "/", gen)
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: release, Generation: gen, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(gen) * time.Minute)},
		Images: []manifest.Image{{
			Name: release, Ref: "registry.test/" + release + ":v1", Repository: "registry.test/" + release, Tag: "v1",
			Digest: manifest.MustParseDigest("sha256:" + hexOf("index "+key)), MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64",
				Digest: manifest.MustParseDigest("sha256:" + hexOf("manifest "+key)), Config: manifest.MustParseDigest("sha256:" + hexOf("config "+key))}},
		}},
	}
	if len(fs) > 0 {
		m.Assets = manifest.Assets{CDN: []string{"https://cdn.test/"}, Files: fs, Fingerprint: manifest.Fingerprint(fs)}
	}
	raw, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.NewSigned(raw, "test")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// publish is the pipeline: upload every asset (never skipping one that
// is there: the upload refreshes its modification time, which
// --older-than reads), then store and move production.
func (w *pruneWorld) publish(s *manifest.Signed) error {
	for _, f := range s.Manifest.Assets.Files {
		if err := w.put(f.Path); err != nil {
			return err
		}
	}
	_, err := store.Publish(context.Background(), w.st, s, "production", "test")
	return err
}

func (w *pruneWorld) mustPublish(t *testing.T, s *manifest.Signed) {
	t.Helper()
	if err := w.publish(s); err != nil {
		t.Fatal(err)
	}
}

func (w *pruneWorld) mustPut(t *testing.T, key string) {
	t.Helper()
	if err := w.put(key); err != nil {
		t.Fatal(err)
	}
}

// pruneFixture: web generations 1-3 (web 1 lists shared/logo.png, which
// api's live generation lists too), api generations 1-2, and a stray
// object. It returns the manifests by "release/gen".
func (w *pruneWorld) fixture(t *testing.T) map[string]*manifest.Signed {
	ms := map[string]*manifest.Signed{}
	for g := int64(1); g <= 3; g++ {
		files := []string{fmt.Sprintf("web/app-%d.js", g)}
		if g == 1 {
			files = append(files, "shared/logo.png")
		}
		ms[fmt.Sprint("web/", g)] = pruneManifest(t, "web", g, files...)
		w.mustPublish(t, ms[fmt.Sprint("web/", g)])
	}
	for g := int64(1); g <= 2; g++ {
		ms[fmt.Sprint("api/", g)] = pruneManifest(t, "api", g, fmt.Sprintf("api/x-%d.js", g), "shared/logo.png")
		w.mustPublish(t, ms[fmt.Sprint("api/", g)])
	}
	w.mustPut(t, "stray.txt")
	return ms
}

func manifestRel(s *manifest.Signed) string {
	return s.Manifest.Release.Name + "/manifests/" + s.Digest.String() + ".json"
}

func TestAttackPrune(t *testing.T) {
	t.Parallel()
	type env struct {
		w  *pruneWorld
		ms map[string]*manifest.Signed
	}
	prune := func(e *env, extra ...string) []string {
		return append([]string{"cdn", "prune", "--store", e.w.storeURL, "--origin", e.w.originURL, "--yes"}, extra...)
	}
	for _, tc := range []struct {
		name string
		// args may change the world first.
		args func(t *testing.T, e *env) []string
		code int
		want string
		// deleted is what the run may delete (nil: nothing).
		deleted []string
	}{
		{"an asset another release's live generation lists", func(t *testing.T, e *env) []string {
			return prune(e, "--release", "web", "--keep", "1")
		}, ExitOK, "deleted web/app-1.js", []string{"web/app-1.js", "web/app-2.js"}},
		{"--prune-unknown keeps every release's assets", func(t *testing.T, e *env) []string {
			return prune(e, "--release", "api", "--keep", "1", "--prune-unknown")
		}, ExitOK, "deleted api/x-1.js", []string{"api/x-1.js", "stray.txt"}},
		{"a mistyped release", func(t *testing.T, e *env) []string {
			return prune(e, "--release", "wbe", "--keep", "1", "--prune-unknown")
		}, ExitInvalid, `holds no release "wbe" (it holds api, web)`, nil},
		{"an empty store", func(t *testing.T, e *env) []string {
			return []string{"cdn", "prune", "--store", e.w.emptyStore, "--origin", e.w.originURL, "--release", "web", "--keep", "0", "--prune-unknown", "--yes"}
		}, ExitUnverified, "holds no release", nil},
		{"a store that is not there", func(t *testing.T, e *env) []string {
			return []string{"cdn", "prune", "--store", e.w.missingStore, "--origin", e.w.originURL, "--release", "web", "--keep", "0", "--prune-unknown", "--yes"}
		}, ExitUnverified, "", nil},
		{"a release with no manifest", func(t *testing.T, e *env) []string {
			for g := 1; g <= 3; g++ {
				if err := e.w.st.Delete(context.Background(), "web", e.ms[fmt.Sprint("web/", g)].Digest); err != nil {
					t.Fatal(err)
				}
			}
			return prune(e, "--release", "web", "--keep", "0", "--prune-unknown")
		}, ExitUnverified, "release web has no manifest", nil},
		{"the live manifest deleted (the us-east-1 cleanup)", func(t *testing.T, e *env) []string {
			if err := e.w.st.Delete(context.Background(), "web", e.ms["web/3"].Digest); err != nil {
				t.Fatal(err)
			}
			return prune(e, "--release", "web", "--keep", "0")
		}, ExitUnverified, "channel production of web names manifest " + "", nil},
		{"another release's live manifest deleted", func(t *testing.T, e *env) []string {
			if err := e.w.st.Delete(context.Background(), "api", e.ms["api/2"].Digest); err != nil {
				t.Fatal(err)
			}
			return prune(e, "--release", "web", "--keep", "0")
		}, ExitUnverified, "channel production of api names manifest", nil},
		{"another release's manifest unreadable", func(t *testing.T, e *env) []string {
			e.w.raw(t, manifestRel(e.ms["api/1"]), []byte("{not a manifest"))
			return prune(e, "--release", "web", "--keep", "1")
		}, ExitUnverified, "of api", nil},
		{"a channel that does not exist", func(t *testing.T, e *env) []string {
			return prune(e, "--release", "web", "--keep", "1", "--channel", "prodution")
		}, ExitInvalid, `--channel: release web has no channel "prodution" (it has production)`, nil},
		{"a release with no channel", func(t *testing.T, e *env) []string {
			s := pruneManifest(t, "solo", 1, "solo/a.js")
			e.w.mustPut(t, "solo/a.js")
			if err := e.w.st.Put(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			return prune(e, "--release", "solo", "--keep", "0", "--prune-unknown")
		}, ExitUnverified, "release solo has no channel", nil},
		{"--prune-unknown with no kept asset (I know of nothing)", func(t *testing.T, e *env) []string {
			e.w.mustPublish(t, pruneManifest(t, "img", 1))
			return prune(e, "--release", "img", "--keep", "1", "--prune-unknown")
		}, ExitInvalid, "--prune-unknown: the kept generations of img list no asset", nil},
		{"--prune-unknown on the wrong origin", func(t *testing.T, e *env) []string {
			args := prune(e, "--release", "web", "--keep", "1", "--prune-unknown")
			args[5] = e.w.originURL + "-other"
			if !strings.HasPrefix(args[5], "s3://") {
				os.MkdirAll(args[5], 0o755)
			}
			return args
		}, ExitMismatch, "missing web/app-3.js", nil},
		{"a negative --keep", func(t *testing.T, e *env) []string {
			return prune(e, "--release", "web", "--keep", "-1")
		}, ExitInvalid, "--keep", nil},
	} {
		for _, target := range []string{"dir", "radosgw"} {
			t.Run(target+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				var w *pruneWorld
				if target == "dir" {
					w = dirPruneWorld(t)
				} else {
					w = radosgwPruneWorld(t)
				}
				e := &env{w: w, ms: w.fixture(t)}
				args := tc.args(t, e)
				before := w.keys(t)
				code, out, errs := runIn(t, w.env, args...)
				if code != tc.code || !strings.Contains(out+errs, tc.want) {
					t.Errorf("%q: exit %d, want %d saying %q\nstdout %s\nstderr %s", args, code, tc.code, tc.want, out, errs)
				}
				var want []string
				for _, k := range before {
					if !slices.Contains(tc.deleted, k) {
						want = append(want, k)
					}
				}
				if got := w.keys(t); !slices.Equal(got, want) {
					t.Errorf("the origin holds %v, want %v", got, want)
				}
			})
		}
	}
}

// Publishes race the prune, as in the us-east-1 incident: two releases
// share one origin, new generations of both land (reusing older assets)
// while cdn prune --keep 1 runs again and again. Every prune that says
// it is done (exit 0) must leave every live generation whole; a prune
// that deleted an asset a manifest stored in its last window lists must
// say so (exit 1, naming it), and is then repaired by uploading again.
func TestAttackPruneRace(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"dir", "radosgw"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			var w *pruneWorld
			if target == "dir" {
				w = dirPruneWorld(t)
			} else {
				w = radosgwPruneWorld(t)
			}
			w.fixture(t)
			const gens = 10
			done := make(chan error, 1)
			var published sync.Map // "release/gen" -> *manifest.Signed
			go func() {
				defer close(done)
				for g := int64(4); g < 4+gens; g++ {
					time.Sleep(300 * time.Millisecond)
					web := pruneManifest(t, "web", g, fmt.Sprintf("web/app-%d.js", g), fmt.Sprintf("web/app-%d.js", g-3), "shared/logo.png")
					api := pruneManifest(t, "api", g, fmt.Sprintf("api/x-%d.js", g), fmt.Sprintf("web/app-%d.js", g-2))
					for _, s := range []*manifest.Signed{web, api} {
						if err := w.publish(s); err != nil {
							done <- err
							return
						}
						published.Store(s.Manifest.ID(), s)
					}
				}
			}()
			runs, detected, deleted := 0, 0, 0
			for loop := true; loop; runs++ {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("publishing: %v", err)
					}
					loop = false
				default:
				}
				for _, rel := range []string{"web", "api"} {
					code, out, errs := runIn(t, w.env, "cdn", "prune", "--store", w.storeURL, "--origin", w.originURL, "--release", rel, "--keep", "1", "--older-than", "2s", "--yes")
					deleted += strings.Count("\n"+out, "\ndeleted ")
					switch {
					case code == ExitOK:
					case code == ExitMismatch && strings.Contains(errs, "upload the asset again"):
						// The window between the last recheck and a
						// delete, reported: the operator uploads again.
						detected++
						repairLive(t, w)
					default:
						t.Fatalf("prune %s: exit %d\n%s\n%s", rel, code, out, errs)
					}
				}
			}
			if deleted == 0 {
				t.Fatalf("%d prune rounds deleted nothing: the race was not exercised", runs)
			}
			// Every live generation of every release is whole.
			for _, rel := range []string{"web", "api"} {
				st, err := store.Status(context.Background(), w.st, rel, "production")
				if err != nil {
					t.Fatal(err)
				}
				live, _ := published.Load(fmt.Sprint(rel, "@", st.Generation))
				if live == nil {
					t.Fatalf("%s production at %d, which the test did not publish", rel, st.Generation)
				}
				have := w.keys(t)
				for _, f := range live.(*manifest.Signed).Manifest.Assets.Files {
					if !slices.Contains(have, f.Path) {
						t.Errorf("live %s generation %d lost %s (after %d prunes, %d detected races)", rel, st.Generation, f.Path, runs, detected)
					}
				}
			}
			t.Logf("%d prune rounds, %d races detected and repaired", runs, detected)
		})
	}
}

// repairLive uploads every asset of every release's live generation.
func repairLive(t *testing.T, w *pruneWorld) {
	ctx := context.Background()
	rels, err := w.st.Releases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range rels {
		s, err := store.ChannelSource{Store: w.st, Release: rel, Channel: "production"}.Fetch(ctx)
		if err != nil {
			continue
		}
		for _, f := range s.Manifest.Assets.Files {
			w.mustPut(t, f.Path)
		}
	}
}
