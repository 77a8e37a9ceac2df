package store_test

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest/store"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want store.URL
	}{
		{"file:///var/lib/store", store.URL{Scheme: "file", Dir: "/var/lib/store"}},
		{"file:///var/lib/store/", store.URL{Scheme: "file", Dir: "/var/lib/store"}},
		{"/tmp/x/", store.URL{Scheme: "file", Dir: "/tmp/x"}},
		{"relative/dir", store.URL{Scheme: "file", Dir: "relative/dir"}},
		{"../store", store.URL{Scheme: "file", Dir: "../store"}},
		{"s3://releases", store.URL{Scheme: "s3", Bucket: "releases"}},
		{"s3://releases/", store.URL{Scheme: "s3", Bucket: "releases"}},
		{"s3://releases/lockstep/prod/", store.URL{Scheme: "s3", Bucket: "releases", Prefix: "lockstep/prod"}},
		{"s3://my.bucket-1/a", store.URL{Scheme: "s3", Bucket: "my.bucket-1", Prefix: "a"}},
	} {
		got, err := store.ParseURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{
		"", "file://", "file://store", "file:/x", "file:x", "FILE:///x", "s3:/bucket/x", "s3:bucket", "S3://bucket",
		"s3://", "s3:///x", "s3://ab", "s3://" + strings.Repeat("a", 64), "s3://Bucket", "s3://bu_cket", "s3://-bucket",
		"s3://bucket-", "s3://bu..cket", "s3://192.168.1.1", "s3://bucket/../x", "s3://bucket/a/../b", "s3://bucket/./x",
		"s3://bucket/a//b", "s3://bucket/%2e%2e/x", "s3://bucket/x?versionId=1", "s3://bucket/x#frag",
		"file:///var/%2e%2e/etc", "file:///var/lib/../x", "file:///x?y", "file:///x#y", "http://example.test/x",
		"https://bucket.s3.amazonaws.com/x", "gs://bucket/x", "s3://bucket/a\\b", "/tmp/x\n", "s3://bucket/\u202ex",
		"/tmp/\xff",
	} {
		if got, err := store.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) = %+v, want an error", bad, got)
		}
	}
}

// FuzzParseURL: no input panics, and every URL accepted is safe to use:
// its canonical form parses to the same URL, an S3 prefix has no empty,
// "." or ".." segment, and a file:// URL names an absolute directory.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"file:///var/lib/x", "s3://bucket/a/b/", "dir", "s3:/x", "file://x", "s3://b/%2e%2e", "s3://a.b.c.d/x?y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := store.ParseURL(raw)
		if err != nil {
			return
		}
		again, err := store.ParseURL(u.String())
		if err != nil || again != u {
			t.Fatalf("ParseURL(%q) = %+v; its String %q parses to %+v, %v", raw, u, u.String(), again, err)
		}
		switch u.Scheme {
		case "s3":
			if u.Bucket == "" || strings.ContainsAny(u.Bucket+u.Prefix, "?#%\\") {
				t.Fatalf("ParseURL(%q) = %+v: bad bucket or prefix", raw, u)
			}
			if u.Prefix != "" {
				for _, seg := range strings.Split(u.Prefix, "/") {
					if seg == "" || seg == "." || seg == ".." {
						t.Fatalf("ParseURL(%q) = %+v: prefix segment %q", raw, u, seg)
					}
				}
			}
		case "file":
			if strings.HasPrefix(raw, "file:") && !strings.HasPrefix(u.Dir, "/") {
				t.Fatalf("ParseURL(%q) = %+v: a file URL with a relative directory", raw, u)
			}
			if u.Dir == "" {
				t.Fatalf("ParseURL(%q) = %+v: no directory", raw, u)
			}
		default:
			t.Fatalf("ParseURL(%q) = %+v: scheme %q", raw, u, u.Scheme)
		}
	})
}

func TestOverlaps(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"s3://bkt/site", "s3://bkt/site", true},
		{"s3://bkt/site", "s3://bkt/site/releases", true},
		{"s3://bkt/", "s3://bkt/releases", true},
		{"s3://bkt/site", "s3://bkt/sites", false},
		{"s3://bkt/site", "s3://cdn/site", false},
		{"/srv/www", "/srv/www/releases", true},
		{"/srv/www", "/srv/www", true},
		{"/srv/www", "/srv/www2", false},
		{"/", "/srv", true},
		{"/srv/www", "s3://bkt/srv/www", false},
	} {
		a, err := store.ParseURL(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := store.ParseURL(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Overlaps(b); got != tc.want {
			t.Errorf("ParseURL(%q).Overlaps(%q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := b.Overlaps(a); got != tc.want {
			t.Errorf("ParseURL(%q).Overlaps(%q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}
