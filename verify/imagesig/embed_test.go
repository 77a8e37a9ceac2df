package imagesig_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// TestEmbedded: record embeds the signatures; the boot gate verifies them
// from the manifest alone, sending zero requests to the registry.
func TestEmbedded(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key := sigtest.Key(t)
	idx, plats := reg.PushIndex(t, "app/multi", "v1")
	for _, d := range plats {
		sigtest.SignImage(t, d, key, nil, nil, nil)
	}
	sigtest.SignImage(t, idx, key, nil, nil, nil)
	single := reg.PushImage(t, "app/worker", "v1")
	sigtest.SignImage(t, single, key, nil, nil, nil)
	images := []manifest.Image{sigtest.Pin(t, "web", idx), sigtest.Pin(t, "worker", single)}

	emb, err := keyVerifier(t, key, imagesig.Policy{}, nil).Embed(ctx, images)
	if err != nil {
		t.Fatal(err)
	}
	if len(emb.Signatures) != 4 {
		t.Fatalf("embedded %d signatures, want 4 (index, 2 platforms, worker)", len(emb.Signatures))
	}
	m := &manifest.Manifest{Images: images, Verification: emb}

	// The material survives the manifest's encoding.
	m.APIVersion, m.Kind = manifest.APIVersion, manifest.Kind
	m.Release = manifest.Release{Name: "store-web", Generation: 1, CreatedAt: time.Date(2021, 4, 5, 12, 0, 0, 0, time.UTC)}
	m.Assets = manifest.Assets{CDN: []string{"https://cdn.example/"}, Fingerprint: manifest.Fingerprint(nil)}
	raw, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m, err = manifest.Parse(raw)
	if err != nil {
		t.Fatalf("Parse(a manifest with embedded signatures) = %v", err)
	}

	before := reg.Requests()
	for _, p := range []imagesig.Policy{{}, {Index: imagesig.IndexOnly}, {Index: imagesig.IndexAndPlatforms}} {
		if err := keyVerifier(t, key, p, nil).VerifyEmbedded(ctx, m); err != nil {
			t.Errorf("VerifyEmbedded(policy %q) = %v", p.Index, err)
		}
	}
	if n := reg.Requests() - before; n != 0 {
		t.Errorf("VerifyEmbedded sent %d requests to the registry, want 0", n)
	}

	tamper := func(f func(v *manifest.Verification)) *manifest.Manifest {
		c := *m
		v := &manifest.Verification{Signatures: append([]manifest.EmbeddedSignature(nil), m.Verification.Signatures...)}
		f(v)
		c.Verification = v
		return &c
	}
	first := func(v *manifest.Verification) *manifest.EmbeddedSignature {
		for i := range v.Signatures {
			if v.Signatures[i].Digest == images[1].Digest {
				return &v.Signatures[i]
			}
		}
		t.Fatal("no embedded signature for the worker")
		return nil
	}
	for _, tc := range []struct {
		name string
		m    *manifest.Manifest
		want outcome
		say  string
	}{
		{"nothing embedded", tamper(func(v *manifest.Verification) { v.Signatures = nil }), unsigned, "unsigned"},
		{"no verification section", func() *manifest.Manifest { c := *m; c.Verification = nil; return &c }(), unsigned, "unsigned"},
		{"signature flipped", tamper(func(v *manifest.Verification) {
			e := first(v)
			b, _ := base64.StdEncoding.DecodeString(e.Signature)
			b[len(b)/2] ^= 1
			e.Signature = base64.StdEncoding.EncodeToString(b)
		}), refused, "no signature verifies"},
		{"payload changed", tamper(func(v *manifest.Verification) {
			e := first(v)
			p, _ := base64.StdEncoding.DecodeString(e.Payload)
			e.Payload = base64.StdEncoding.EncodeToString(append(p, ' '))
		}), refused, "no signature verifies"},
		{"payload not base64", tamper(func(v *manifest.Verification) { first(v).Payload = "***" }), refused, "does not parse"},
		{"signature not base64", tamper(func(v *manifest.Verification) { first(v).Signature = "***" }), refused, "does not parse"},
		{"rekor bundle not JSON", tamper(func(v *manifest.Verification) { first(v).Bundle = []byte("{") }), refused, "does not parse"},
		{"certificate not PEM", tamper(func(v *manifest.Verification) { first(v).Certificate = "junk" }), refused, "does not parse"},
		{"another digest's signature", tamper(func(v *manifest.Verification) {
			for i := range v.Signatures {
				if v.Signatures[i].Digest == images[1].Digest {
					v.Signatures[i].Digest = images[0].Platforms[0].Digest
				}
			}
			v.Signatures = append(v.Signatures, manifest.EmbeddedSignature{Digest: images[1].Digest, Payload: first0(m).Payload, Signature: first0(m).Signature})
		}), refused, "no signature verifies"},
	} {
		err := keyVerifier(t, key, imagesig.Policy{}, nil).VerifyEmbedded(ctx, tc.m)
		if got := classify(err); got != tc.want || (err != nil && !strings.Contains(err.Error(), tc.say)) {
			t.Errorf("%s: VerifyEmbedded = %v (%s), want %s saying %q", tc.name, err, got, tc.want, tc.say)
		}
	}

	// Embedding refuses what the policy requires but is unsigned.
	unsignedD := reg.PushImage(t, "app/unsigned", "v1")
	if _, err := keyVerifier(t, key, imagesig.Policy{}, nil).Embed(ctx, []manifest.Image{sigtest.Pin(t, "x", unsignedD)}); classify(err) != unsigned {
		t.Errorf("Embed(unsigned) = %v, want unsigned", err)
	}
}

// first0 is the embedded signature of the index (any signature of another
// digest).
func first0(m *manifest.Manifest) manifest.EmbeddedSignature {
	for _, e := range m.Verification.Signatures {
		if e.Digest == m.Images[0].Digest {
			return e
		}
	}
	return manifest.EmbeddedSignature{}
}

// TestKeyless: keyless image signatures (a certificate and chain beside
// the signature) are checked against the identity and the trusted root,
// offline, from the registry and embedded.
func TestKeyless(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	ca := sigtest.NewCA(t)
	const issuer = "https://token.actions.githubusercontent.com"
	const wf = "https://github.com/lockstep-dev/store/.github/workflows/release.yml@refs/heads/main"
	d := reg.PushImage(t, "app/web", "v1")
	sv, cert := ca.Leaf(t, wf, issuer)
	sigtest.SignImage(t, d, sv, sigtest.CertPEM(t, cert), ca.ChainPEM(t), nil)
	other := reg.PushImage(t, "app/web", "v2")
	sv2, cert2 := sigtest.NewCA(t).Leaf(t, wf, issuer)
	sigtest.SignImage(t, other, sv2, sigtest.CertPEM(t, cert2), nil, nil)
	tr := sigtest.TrustedRoot(t, ca)
	trust := func(id signature.Identity) *imagesig.Verifier {
		v, err := imagesig.New(imagesig.Options{Trust: signature.Options{Identity: &id, TrustedRoot: tr, IgnoreTlog: true, IgnoreSCT: true}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	im := sigtest.Pin(t, "web", d)
	for _, tc := range []struct {
		name string
		im   manifest.Image
		id   signature.Identity
		want outcome
	}{
		{"identity and issuer", im, signature.Identity{Subject: wf, Issuer: issuer}, accepted},
		{"identity regexp", im, signature.Identity{SubjectRegexp: `^https://github\.com/lockstep-dev/store/`, Issuer: issuer}, accepted},
		{"another identity", im, signature.Identity{Subject: "https://github.com/evil/x/.github/workflows/a.yml@refs/heads/main", Issuer: issuer}, refused},
		{"another issuer", im, signature.Identity{Subject: wf, Issuer: "https://accounts.google.com"}, refused},
		{"an untrusted CA", sigtest.Pin(t, "web", other), signature.Identity{Subject: wf, Issuer: issuer}, refused},
	} {
		err := trust(tc.id).Verify(ctx, []manifest.Image{tc.im})
		if got := classify(err); got != tc.want {
			t.Errorf("%s: Verify = %v (%s), want %s", tc.name, err, got, tc.want)
		}
	}
	v := trust(signature.Identity{Subject: wf, Issuer: issuer})
	emb, err := v.Embed(ctx, []manifest.Image{im})
	if err != nil {
		t.Fatal(err)
	}
	if len(emb.Signatures) != 1 || emb.Signatures[0].Certificate == "" || emb.Signatures[0].Chain == "" {
		t.Fatalf("embedded %+v, want one signature with its certificate and chain", emb.Signatures)
	}
	m := &manifest.Manifest{Images: []manifest.Image{im}, Verification: emb}
	if err := v.VerifyEmbedded(ctx, m); err != nil {
		t.Errorf("VerifyEmbedded(keyless) = %v", err)
	}
	if err := trust(signature.Identity{Subject: wf, Issuer: "https://accounts.google.com"}).VerifyEmbedded(ctx, m); classify(err) != refused {
		t.Errorf("VerifyEmbedded(keyless, another issuer) = %v, want a refusal", err)
	}
}
