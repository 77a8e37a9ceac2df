package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lockstep-dev/lockstep/manifest"
)

// The cases of classes 6, 8 and 9 that an S3 store meets, against
// gofakes3 and, where LOCKSTEP_TEST_S3_ENDPOINT names it, Ceph's radosgw:
// the objects an attacker can write are refused as the directory store's
// files are, and the bucket is unchanged.

type s3Attack struct {
	name string
	// args writes objects (put) and returns the command to run.
	args func(t *testing.T, a *s3AttackEnv) []string
	code int
	want string
}

type s3AttackEnv struct {
	api    *s3.Client
	bucket string
	url    string
	dir    string
	ms     []*manifest.Signed
}

func (a *s3AttackEnv) key(rel string) string { return "lockstep/web/" + rel }

func (a *s3AttackEnv) manifestKey(g int) string {
	return a.key("manifests/" + a.ms[g-1].Digest.String() + ".json")
}

func (a *s3AttackEnv) put(t *testing.T, key string, data []byte) {
	t.Helper()
	if _, err := a.api.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &a.bucket, Key: &key, Body: bytes.NewReader(data)}); err != nil {
		t.Fatalf("putting %s: %v", key, err)
	}
}

// objects is every object of the bucket with a hash of its bytes.
func (a *s3AttackEnv) objects(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	list, err := a.api.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &a.bucket})
	if err != nil {
		t.Fatalf("listing the bucket: %v", err)
	}
	for _, o := range list.Contents {
		obj, err := a.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &a.bucket, Key: o.Key})
		if err != nil {
			t.Fatalf("reading %s: %v", aws.ToString(o.Key), err)
		}
		h := sha256.New()
		io.Copy(h, obj.Body)
		obj.Body.Close()
		out[aws.ToString(o.Key)] = hex.EncodeToString(h.Sum(nil))
	}
	return out
}

func s3Attacks() []s3Attack {
	pointer := func(a *s3AttackEnv, gen, by string) []byte {
		return []byte(fmt.Sprintf(`{"release":"web","channel":"production","digest":%q,"generation":%s,"movedAt":"2026-01-01T00:00:00Z","movedBy":"%s"}`, a.ms[2].Digest.String(), gen, by))
	}
	status := func(a *s3AttackEnv) []string { return []string{"status", "--store", a.url, "--release", "web"} }
	blank := func(suffix, data string) func(t *testing.T, a *s3AttackEnv) []string {
		return func(t *testing.T, a *s3AttackEnv) []string {
			p := filepath.Join(a.dir, "g1.json")
			os.WriteFile(p+suffix, []byte(data), 0o644)
			return []string{"publish", "--allow-unsigned", "--store", a.url, p}
		}
	}
	return []s3Attack{
		{"class 6/status: a pointer over 1 MiB", func(t *testing.T, a *s3AttackEnv) []string {
			a.put(t, a.key("channels/production.json"), append(pointer(a, "3", "ci"), bytes.Repeat([]byte(" "), manifest.MaxPointerSize)...))
			return status(a)
		}, ExitUnverified, "over"},
		{"class 6/status: a signature over 1 MiB", func(t *testing.T, a *s3AttackEnv) []string {
			a.put(t, strings.TrimSuffix(a.manifestKey(3), ".json")+".sig", bytes.Repeat([]byte("A"), manifest.MaxSidecarSize+1))
			return status(a)
		}, ExitUnverified, "over"},
		{"class 8/status: a pointer past 2^53-1", func(t *testing.T, a *s3AttackEnv) []string {
			a.put(t, a.key("channels/production.json"), pointer(a, "9007199254740992", "ci"))
			return status(a)
		}, ExitUnverified, "over the maximum"},
		{"class 8/status: a pointer with invalid UTF-8", func(t *testing.T, a *s3AttackEnv) []string {
			a.put(t, a.key("channels/production.json"), pointer(a, "3", "c\xffi"))
			return status(a)
		}, ExitUnverified, "utf-8"},
		{"class 8/status: a pointer with a lone surrogate", func(t *testing.T, a *s3AttackEnv) []string {
			a.put(t, a.key("channels/production.json"), pointer(a, "3", `c\udbffi`))
			return status(a)
		}, ExitUnverified, "lone surrogate"},
		{"class 9/publish: an empty signature", blank(".sig", ""), ExitInvalid, "invalid signature"},
		{"class 9/publish: a white-space bundle", blank(".sigstore.json", "\n "), ExitInvalid, "invalid signature"},
	}
}

func TestAttackStoreS3(t *testing.T) {
	t.Parallel()
	// A target is a bucket ("": one to create) and the environment of the
	// runs that reach it.
	targets := map[string]func(t *testing.T) (string, []string){
		"gofakes3": func(t *testing.T) (string, []string) {
			_, _, env := FakeS3(t, "releases")
			return "releases", env
		},
		"radosgw": func(t *testing.T) (string, []string) {
			return "", useRadosgw(t)
		},
	}
	for _, target := range []string{"gofakes3", "radosgw"} {
		for i, tc := range s3Attacks() {
			t.Run(target+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				bucket, env := targets[target](t)
				api, err := newS3Client(context.Background(), envMap(env), nil)
				if err != nil {
					t.Fatal(err)
				}
				if bucket == "" {
					bucket = fmt.Sprintf("lockstep-attack-%d-%d", os.Getpid(), i)
					if _, err := api.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
						t.Fatalf("creating bucket: %v", err)
					}
				}
				a := &s3AttackEnv{api: api, bucket: bucket, url: "s3://" + bucket + "/lockstep", dir: t.TempDir()}
				a.ms = storeTestManifests(t, a.dir, 3)
				for g := 1; g <= 3; g++ {
					if code, out, errs := runIn(t, env, "publish", "--allow-unsigned", "--store", a.url, filepath.Join(a.dir, fmt.Sprintf("g%d.json", g))); code != 0 {
						t.Fatalf("publish g%d: exit %d\n%s\n%s", g, code, out, errs)
					}
				}
				args := tc.args(t, a)
				before := a.objects(t)
				code, out, errs := runIn(t, env, args...)
				if code != tc.code || !strings.Contains(strings.ToLower(out+errs), tc.want) {
					t.Errorf("%q: exit %d, want %d saying %q\n%s\n%s", args, code, tc.code, tc.want, out, errs)
				}
				after := a.objects(t)
				for k, v := range before {
					if after[k] != v {
						t.Errorf("%q changed object %s", args, k)
					}
				}
				for k := range after {
					if _, ok := before[k]; !ok {
						t.Errorf("%q created object %s", args, k)
					}
				}
			})
		}
	}
}
