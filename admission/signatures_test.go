package admission_test

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/ggcrretry"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// gateConfig is admission.Config as `lockstep admit --key cosign.pub
// --require-image-signature --platform linux/amd64` builds it.
func gateConfig(t testing.TB, r *sigtest.Release, path string, requireEmbedded bool) admission.Config {
	t.Helper()
	mv, err := signature.NewVerifier(signature.Options{Key: r.Key})
	if err != nil {
		t.Fatal(err)
	}
	client := transport.New(transport.Policy{MaxAttempts: 1, Timeout: 2 * time.Second})
	iv, err := imagesig.New(imagesig.Options{
		Trust:  signature.Options{Key: r.Key},
		Policy: imagesig.Policy{Platforms: []string{"linux/amd64"}},
		Remote: ggcrretry.Options(client),
	})
	if err != nil {
		t.Fatal(err)
	}
	return admission.Config{
		CDN:    cdngate.Checker{},
		Source: manifest.FileSource{Path: path}, Verifier: mv,
		ImageSignatures: iv, RequireEmbeddedSignatures: requireEmbedded,
		Image: "web", Running: running.Given{Value: r.Platforms["linux/amd64"].DigestStr()}, Platform: "linux/amd64",
		Client: client, Timeout: 10 * time.Second,
	}
}

// TestImageSignaturesEmbeddedZeroRequests is issue 6's "the boot gate with
// embedded verification material makes zero registry requests": admitted
// with the registry counting 0 requests, and admitted again with the
// registry gone.
func TestImageSignaturesEmbeddedZeroRequests(t *testing.T) {
	r := sigtest.NewRelease(t, nil, "index", "linux/amd64", "linux/arm64")
	path := r.WriteManifest(t, r.Embed(t, r.Key, imagesig.Policy{}))
	before := r.Reg.Requests()
	d := admission.Check(context.Background(), gateConfig(t, r, path, false))
	if !d.Allowed || d.ImageSignature != admission.SignaturesEmbedded || d.Match != "manifest" {
		t.Fatalf("embedded material: Allowed %v, ImageSignature %q, Match %q; want admitted from the embedded material\n%s", d.Allowed, d.ImageSignature, d.Match, dump(d))
	}
	if n := r.Reg.Requests() - before; n != 0 || d.Requests != 0 {
		t.Errorf("the gate sent %d requests to the registry (%d in all), want 0", n, d.Requests)
	}

	r.Reg.Server.Close()
	for _, embeddedOnly := range []bool{false, true} {
		d = admission.Check(context.Background(), gateConfig(t, r, path, embeddedOnly))
		if !d.Allowed || d.ImageSignature != admission.SignaturesEmbedded {
			t.Errorf("registry stopped (require embedded %v): Allowed %v, want admitted from the manifest alone\n%s", embeddedOnly, d.Allowed, dump(d))
		}
	}
}

// TestImageSignaturesRefused: every way an image can be unsigned or
// wrongly signed refuses with image-signature-invalid, a refusal (exit 1)
// rather than a could-not-verify; with embedded material, no registry
// request is sent on the way.
func TestImageSignaturesRefused(t *testing.T) {
	other := sigtest.Key(t)
	amd64Only := imagesig.Policy{Platforms: []string{"linux/amd64"}} // a release that runs on amd64
	for _, tc := range []struct {
		name string
		// release signs what it signs; material is the manifest's
		// embedded material (nil: none).
		release  func(t *testing.T) *sigtest.Release
		material func(t *testing.T, r *sigtest.Release) *manifest.Verification
		embedded bool // require embedded
		from     string
		zero     bool // no registry request
	}{
		{
			name:    "unsigned image, from the registry",
			release: func(t *testing.T) *sigtest.Release { return sigtest.NewRelease(t, nil) },
			from:    admission.SignaturesRegistry,
		},
		{
			name:     "no embedded material, embedded required",
			release:  func(t *testing.T) *sigtest.Release { return sigtest.NewRelease(t, nil, "index", "linux/amd64") },
			embedded: true,
			zero:     true,
		},
		{
			name:     "signed with another key, embedded",
			release:  func(t *testing.T) *sigtest.Release { return sigtest.NewRelease(t, other, "index", "linux/amd64") },
			material: func(t *testing.T, r *sigtest.Release) *manifest.Verification { return r.Embed(t, other, amd64Only) },
			from:     admission.SignaturesEmbedded,
			zero:     true,
		},
		{
			name:    "signed with another key, from the registry",
			release: func(t *testing.T) *sigtest.Release { return sigtest.NewRelease(t, other, "linux/amd64") },
			from:    admission.SignaturesRegistry,
		},
		{
			// cosign#786: the index signature does not sign what an amd64
			// node pulls.
			name:    "signed index, unsigned running platform, embedded",
			release: func(t *testing.T) *sigtest.Release { return sigtest.NewRelease(t, nil, "index", "linux/arm64") },
			material: func(t *testing.T, r *sigtest.Release) *manifest.Verification {
				return r.Embed(t, r.Key, imagesig.Policy{Index: imagesig.IndexOnly})
			},
			from: admission.SignaturesEmbedded,
			zero: true,
		},
		{
			name:    "signed index, unsigned running platform, from the registry",
			release: func(t *testing.T) *sigtest.Release { return sigtest.NewRelease(t, nil, "index", "linux/arm64") },
			from:    admission.SignaturesRegistry,
		},
		{
			// The manifest is signed after the material was altered: its
			// signature holds, the image signature must not.
			name:    "tampered embedded signature",
			release: func(t *testing.T) *sigtest.Release { return sigtest.NewRelease(t, nil, "index", "linux/amd64") },
			material: func(t *testing.T, r *sigtest.Release) *manifest.Verification {
				v := r.Embed(t, r.Key, amd64Only)
				for i, e := range v.Signatures {
					if e.Digest.String() == r.Platforms["linux/amd64"].DigestStr() {
						raw, _ := base64.StdEncoding.DecodeString(e.Signature)
						raw[len(raw)/2] ^= 1
						v.Signatures[i].Signature = base64.StdEncoding.EncodeToString(raw)
					}
				}
				return v
			},
			from: admission.SignaturesEmbedded,
			zero: true,
		},
		{
			name:    "tampered embedded payload",
			release: func(t *testing.T) *sigtest.Release { return sigtest.NewRelease(t, nil, "index", "linux/amd64") },
			material: func(t *testing.T, r *sigtest.Release) *manifest.Verification {
				v := r.Embed(t, r.Key, amd64Only)
				for i := range v.Signatures {
					v.Signatures[i].Payload = "not base64!"
				}
				return v
			},
			from: admission.SignaturesEmbedded,
			zero: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.release(t)
			var emb *manifest.Verification
			if tc.material != nil {
				emb = tc.material(t, r)
			}
			path := r.WriteManifest(t, emb)
			before := r.Reg.Requests()
			d := admission.Check(context.Background(), gateConfig(t, r, path, tc.embedded))
			if d.Allowed || d.Unverified || !d.Has(admission.KindImageSignature) || d.ImageSignature != tc.from {
				t.Errorf("Allowed %v, Unverified %v, ImageSignature %q; want refused (exit 1) with image-signature-invalid, from %q\n%s",
					d.Allowed, d.Unverified, d.ImageSignature, tc.from, dump(d))
			}
			if refusals := kinds(d, admission.Refuse); len(refusals) != 1 {
				t.Errorf("refusals %v, want image-signature-invalid alone", refusals)
			}
			if n := r.Reg.Requests() - before; tc.zero && n != 0 {
				t.Errorf("%d registry requests, want 0", n)
			}
		})
	}
}

// TestImageSignaturesRegistryFallback: a manifest that embeds nothing is
// verified from the registry, and the decision says so; the registry down
// is could-not-verify (exit 3), never an admission.
func TestImageSignaturesRegistryFallback(t *testing.T) {
	r := sigtest.NewRelease(t, nil, "linux/amd64")
	path := r.WriteManifest(t, nil)
	before := r.Reg.Requests()
	d := admission.Check(context.Background(), gateConfig(t, r, path, false))
	if !d.Allowed || d.ImageSignature != admission.SignaturesRegistry || r.Reg.Requests() == before || d.Requests == 0 {
		t.Errorf("no embedded material: Allowed %v, ImageSignature %q, %d registry requests; want admitted from the registry\n%s",
			d.Allowed, d.ImageSignature, r.Reg.Requests()-before, dump(d))
	}
	r.Reg.Server.Close()
	d = admission.Check(context.Background(), gateConfig(t, r, path, false))
	if d.Allowed || !d.Unverified || !d.Has(admission.KindDependencyUnreachable) {
		t.Errorf("registry down: Allowed %v, Unverified %v; want refused as could-not-verify\n%s", d.Allowed, d.Unverified, dump(d))
	}
}

// BenchmarkCheckImageSignatures is the boot gate's cost of
// --require-image-signature from embedded material (no cache, so every
// check verifies), against the same check without it.
func BenchmarkCheckImageSignatures(b *testing.B) {
	r := sigtest.NewRelease(b, nil, "index", "linux/amd64", "linux/arm64")
	path := r.WriteManifest(b, r.Embed(b, r.Key, imagesig.Policy{}))
	for _, required := range []bool{false, true} {
		name := "without"
		if required {
			name = "embedded"
		}
		b.Run(name, func(b *testing.B) {
			cfg := gateConfig(b, r, path, false)
			if !required {
				cfg.ImageSignatures = nil
			}
			before := r.Reg.Requests()
			for b.Loop() {
				if d := admission.Check(context.Background(), cfg); !d.Allowed {
					b.Fatalf("refused:\n%s", dump(d))
				}
			}
			if n := r.Reg.Requests() - before; n != 0 {
				b.Fatalf("%d registry requests", n)
			}
		})
	}
}
