package signature_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// measure runs op b.N times, timing each run, and reports p50 and p99
// beside the mean.
func measure(b *testing.B, op func() error) {
	b.Helper()
	ts := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		err := op()
		ts = append(ts, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	q := func(p float64) float64 { return float64(ts[int(p*float64(len(ts)-1))]) / 1e3 }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

// fixture is one signed image in a real docker-registry.
type fixture struct {
	im   manifest.Image
	ref  name.Digest
	key  *signature.Options
	pub  string
	host string
}

func setup(b *testing.B) *fixture {
	b.Helper()
	host := testenv.Registry(b)
	img, err := random.Image(4096, 3)
	if err != nil {
		b.Fatal(err)
	}
	ref, _ := name.ParseReference(host + "/bench/web:v1")
	if err := remote.Write(ref, img); err != nil {
		b.Fatal(err)
	}
	d, _ := img.Digest()
	dref := ref.Context().Digest(d.String())
	sv := sigtest.Key(b)
	sigtest.SignImage(b, dref, sv, nil, nil, nil)
	im, err := registry.Pin(context.Background(), "web", dref.String(), registry.Options{})
	if err != nil {
		b.Fatal(err)
	}
	pub := filepath.Join(b.TempDir(), "cosign.pub")
	os.WriteFile(pub, sigtest.PublicPEM(b, sv), 0o644)
	return &fixture{im: *im, ref: dref, key: &signature.Options{Key: sv}, pub: pub, host: host}
}

func (f *fixture) verifier(b *testing.B, cache *imagesig.Cache) *imagesig.Verifier {
	v, err := imagesig.New(imagesig.Options{Trust: *f.key, Cache: cache})
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkImageSignatureCold: a digest not in the cache: the signature
// image's manifest and layer from the registry, then cosign's
// verification (ECDSA P-256).
func BenchmarkImageSignatureCold(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	v := f.verifier(b, nil)
	images := []manifest.Image{f.im}
	measure(b, func() error { return v.Verify(ctx, images) })
}

// BenchmarkImageSignatureWarm: the digest verified before, from the
// digest-keyed cache: no request.
func BenchmarkImageSignatureWarm(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	cache, _ := imagesig.NewCache(imagesig.CacheOptions{})
	v := f.verifier(b, cache)
	images := []manifest.Image{f.im}
	if err := v.Verify(ctx, images); err != nil {
		b.Fatal(err)
	}
	measure(b, func() error { return v.Verify(ctx, images) })
}

// BenchmarkImageSignatureEmbedded: the boot gate's path with embedded
// material: cosign's verification of the signature in the manifest, no
// registry, no cache.
func BenchmarkImageSignatureEmbedded(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	v := f.verifier(b, nil)
	emb, err := v.Embed(ctx, []manifest.Image{f.im})
	if err != nil {
		b.Fatal(err)
	}
	m := &manifest.Manifest{Images: []manifest.Image{f.im}, Verification: emb}
	measure(b, func() error { return v.VerifyEmbedded(ctx, m) })
}

// BenchmarkCosignCLI: `cosign verify --key --offline --insecure-ignore-tlog`
// per digest, process start included, for comparison.
func BenchmarkCosignCLI(b *testing.B) {
	cosign := sigtest.RequireCosign(b)
	f := setup(b)
	dir := b.TempDir()
	measure(b, func() error {
		if out, err := cosign.Run(dir, "verify", "--key", f.pub, "--offline", "--insecure-ignore-tlog", "--allow-http-registry", "--allow-insecure-registry", f.ref.String()); err != nil {
			return fmt.Errorf("cosign verify: %v\n%s", err, out)
		}
		return nil
	})
}

// manifestOf returns a valid manifest with n assets.
func manifestOf(b *testing.B, n int) []byte {
	files := make([]manifest.File, n)
	for i := range files {
		files[i] = manifest.File{Path: fmt.Sprintf("assets/%06d.js", i), Size: 1000, SHA256: strings.Repeat("ab", 32)}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	d := manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64))
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "store-web", Generation: 7, CreatedAt: time.Now().UTC()},
		Images: []manifest.Image{{Name: "web", Ref: "r/web:v1", Repository: "r/web", Digest: d, MediaType: "application/vnd.oci.image.manifest.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: d, Config: d}}}},
		Assets: manifest.Assets{CDN: []string{"https://cdn.example/"}, Files: files, Fingerprint: manifest.Fingerprint(files)},
	}
	raw, err := m.Encode()
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkManifestSignature: the latency manifest-signature verification
// adds to the boot gate (the manifest is already read and parsed): a
// base64 signature, and a Sigstore bundle, by manifest size.
func BenchmarkManifestSignature(b *testing.B) {
	ctx := context.Background()
	sv := sigtest.Key(b)
	v, err := signature.NewVerifier(signature.Options{Key: sv})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 10000} {
		raw := manifestOf(b, n)
		sig, err := signature.Sign(ctx, sv, raw, signature.SignOptions{Bundle: true})
		if err != nil {
			b.Fatal(err)
		}
		s, err := manifest.NewSigned(raw, "bench")
		if err != nil {
			b.Fatal(err)
		}
		for _, kind := range []string{"sig", "bundle"} {
			b.Run(fmt.Sprintf("%s/assets=%d/%dKiB", kind, n, len(raw)>>10), func(b *testing.B) {
				c := *s
				if kind == "sig" {
					c.Signature = sig.Base64
				} else {
					c.Bundle = sig.Bundle
				}
				b.SetBytes(int64(len(raw)))
				measure(b, func() error { return v.Verify(ctx, &c) })
			})
		}
	}
}
