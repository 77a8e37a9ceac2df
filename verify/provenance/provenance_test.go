package provenance_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/types"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/provenance"
)

const (
	repo    = "https://github.com/lockstep-dev/store"
	commit  = "0123456789abcdef0123456789abcdef01234567"
	commit2 = "fedcba9876543210fedcba9876543210fedcba98"
)

var source = &manifest.BuildSource{Repository: repo, Commit: commit}

func keyed(t *testing.T, key signature.Options, ropts ...remote.Option) *provenance.Verifier {
	t.Helper()
	v, err := provenance.New(provenance.Options{Trust: key, Remote: ropts})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// check is the refusal's check ("" for nil), failing the test on an
// error that is not a refusal.
func check(t *testing.T, err error) provenance.Check {
	t.Helper()
	if err == nil {
		return ""
	}
	var pe *provenance.Error
	if !errors.As(err, &pe) || !verdict.IsMismatch(err) {
		t.Fatalf("error %v is not a provenance refusal", err)
	}
	return pe.Check
}

// TestVerify: attestations in cosign's .att tag, made and signed here
// (the real CLI is in cosign_test.go), each case a digest of its own.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key, otherKey := sigtest.Key(t), sigtest.Key(t)
	v := keyed(t, signature.Options{Key: key})
	image := func(tag string) (name.Digest, manifest.Image) {
		d := reg.PushImage(t, "store/web", tag)
		return d, sigtest.Pin(t, "web", d)
	}
	// tamper edits the signed statement (the commit) and keeps the
	// signature: what an attacker with registry write access can do.
	tamper := func(env []byte) []byte {
		var e map[string]any
		if err := json.Unmarshal(env, &e); err != nil {
			t.Fatal(err)
		}
		st, err := base64.StdEncoding.DecodeString(e["payload"].(string))
		if err != nil {
			t.Fatal(err)
		}
		e["payload"] = base64.StdEncoding.EncodeToString(bytes.ReplaceAll(st, []byte(commit2), []byte(commit)))
		out, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for i, tt := range []struct {
		name   string
		attest func(d name.Digest)
		want   provenance.Check
	}{
		{"right subject and commit", func(d name.Digest) {
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit, d), nil, nil, nil)
		}, ""},
		{"none", func(name.Digest) {}, provenance.CheckMissing},
		{"another key (another builder)", func(d name.Digest) {
			sigtest.AttestImage(t, d, otherKey, sigtest.Provenance(t, repo, commit, d), nil, nil, nil)
		}, provenance.CheckSignature},
		{"tampered after signing", func(d name.Digest) {
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit2, d), nil, nil, tamper)
		}, provenance.CheckSignature},
		{"another commit", func(d name.Digest) {
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit2, d), nil, nil, nil)
		}, provenance.CheckCommit},
		{"another repository", func(d name.Digest) {
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, "https://github.com/evil/store", commit, d), nil, nil, nil)
		}, provenance.CheckRepository},
		{"a provenance of another digest, attached here", func(d name.Digest) {
			o, _ := image("other")
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit, o), nil, nil, nil)
		}, provenance.CheckSubject},
		{"a bad one beside a good one", func(d name.Digest) {
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit2, d), nil, nil, nil)
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit, d), nil, nil, nil)
		}, ""},
		{"two bad ones: the closest is said", func(d name.Digest) {
			sigtest.AttestImage(t, d, otherKey, sigtest.Provenance(t, repo, commit, d), nil, nil, nil)
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit2, d), nil, nil, nil)
		}, provenance.CheckCommit},
		{"a valid signature over a statement that is not in-toto", func(d name.Digest) {
			st := bytes.Replace(sigtest.Provenance(t, repo, commit, d), []byte("https://in-toto.io/Statement/v1"), []byte("https://example.com/Statement/v1"), 1)
			sigtest.AttestImage(t, d, key, st, nil, nil, nil)
		}, provenance.CheckStatement},
		{"a signed predicate of another type", func(d name.Digest) {
			st := bytes.Replace(sigtest.Provenance(t, repo, commit, d), []byte("https://slsa.dev/provenance/v1"), []byte("https://cyclonedx.org/bom"), 1)
			sigtest.AttestImage(t, d, key, st, nil, nil, nil)
		}, provenance.CheckPredicateType},
		{"one statement about many digests, ours among them", func(d name.Digest) {
			a, _ := image("many-a")
			b, _ := image("many-b")
			sigtest.AttestImage(t, d, key, sigtest.Provenance(t, repo, commit, a, d, b), nil, nil, nil)
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, im := image("case" + strconv.Itoa(i))
			tt.attest(d)
			got, err := v.Verify(ctx, []manifest.Image{im}, source)
			if c := check(t, err); c != tt.want {
				t.Fatalf("Verify = %v, want %q", err, tt.want)
			}
			if tt.want != "" {
				return
			}
			if len(got) == 0 {
				t.Fatal("Verify passed but returned no attestation to embed")
			}
			for _, a := range got {
				if a.Digest.String() != d.DigestStr() {
					t.Errorf("embedded attestation for %s, want %s", a.Digest, d.DigestStr())
				}
			}
			// The material alone verifies, with the registry gone.
			m := &manifest.Manifest{Release: manifest.Release{Source: source}, Images: []manifest.Image{im}, Verification: &manifest.Verification{Attestations: got}}
			before := reg.Requests()
			if err := v.VerifyEmbedded(ctx, m); err != nil {
				t.Errorf("VerifyEmbedded(what Verify returned) = %v", err)
			}
			if n := reg.Requests() - before; n != 0 {
				t.Errorf("VerifyEmbedded sent %d registry requests, want none", n)
			}
			// The same material under another release source is refused.
			m.Release.Source = &manifest.BuildSource{Repository: repo, Commit: commit2}
			if c := check(t, v.VerifyEmbedded(ctx, m)); c != provenance.CheckCommit {
				t.Errorf("VerifyEmbedded(another release commit) = %q, want commit", c)
			}
		})
	}
}

// TestVerifyIndex: an index's digest needs a provenance; a platform
// manifest with a provenance of its own from another commit is refused
// even when the index's passes; other attestations on it are left alone.
func TestVerifyIndex(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key := sigtest.Key(t)
	v := keyed(t, signature.Options{Key: key})
	idx, plats := reg.PushIndex(t, "store/api", "v1")
	im := sigtest.Pin(t, "api", idx)
	sigtest.AttestImage(t, plats["linux/amd64"], key, sigtest.Provenance(t, repo, commit, plats["linux/amd64"]), nil, nil, nil)
	if c := check(t, func() error { _, err := v.Verify(ctx, []manifest.Image{im}, source); return err }()); c != provenance.CheckMissing {
		t.Errorf("Verify(a platform attested, not the index) = %q, want missing", c)
	}
	sigtest.AttestImage(t, idx, key, sigtest.Provenance(t, repo, commit, idx), nil, nil, nil)
	got, err := v.Verify(ctx, []manifest.Image{im}, source)
	if err != nil {
		t.Fatalf("Verify(index and a platform attested) = %v", err)
	}
	if len(got) != 2 {
		t.Errorf("Verify returned %d attestations, want 2 (the index's, the platform's)", len(got))
	}
	// Another signer's provenance and the builder's SBOM on a platform say
	// nothing about it: still admitted.
	arm := plats["linux/arm64"]
	sigtest.AttestImage(t, arm, sigtest.Key(t), sigtest.Provenance(t, repo, commit2, arm), nil, nil, nil)
	sbom := bytes.Replace(sigtest.Provenance(t, repo, commit2, arm), []byte("https://slsa.dev/provenance/v1"), []byte("https://spdx.dev/Document"), 1)
	sigtest.AttestImage(t, arm, key, sbom, nil, nil, nil)
	if _, err := v.Verify(ctx, []manifest.Image{im}, source); err != nil {
		t.Errorf("Verify(another signer's and an SBOM on arm64) = %v, want admitted", err)
	}
	// The builder's provenance of arm64 from another commit refuses.
	sigtest.AttestImage(t, arm, key, sigtest.Provenance(t, repo, commit2, arm), nil, nil, nil)
	_, err = v.Verify(ctx, []manifest.Image{im}, source)
	var pe *provenance.Error
	if !errors.As(err, &pe) || pe.Check != provenance.CheckCommit || !strings.Contains(pe.Subject, "linux/arm64") {
		t.Errorf("Verify(the arm64 platform from another commit) = %v, want its commit refusal", err)
	}
}

// TestVerifyKeyless: a DSSE envelope signed by a short-lived certificate
// of a test CA, verified offline against a trusted root naming the CA.
func TestVerifyKeyless(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	ca := sigtest.NewCA(t)
	const wf = "https://github.com/lockstep-dev/store/.github/workflows/release.yml@refs/heads/main"
	const issuer = "https://token.actions.githubusercontent.com"
	sv, cert := ca.Leaf(t, wf, issuer)
	d := reg.PushImage(t, "store/web", "keyless")
	im := sigtest.Pin(t, "web", d)
	sigtest.AttestImage(t, d, sv, sigtest.Provenance(t, repo, commit, d), sigtest.CertPEM(t, cert), ca.ChainPEM(t), nil)
	trust := func(identity string) signature.Options {
		return signature.Options{Identity: &signature.Identity{Subject: identity, Issuer: issuer}, TrustedRoot: sigtest.TrustedRoot(t, ca), IgnoreTlog: true, IgnoreSCT: true}
	}
	got, err := keyed(t, trust(wf)).Verify(ctx, []manifest.Image{im}, source)
	if err != nil {
		t.Fatalf("Verify(keyless, the workflow's identity) = %v", err)
	}
	if len(got) != 1 || got[0].Certificate == "" || got[0].Chain == "" {
		t.Errorf("embedded %+v, want one attestation with its certificate and chain", got)
	}
	m := &manifest.Manifest{Release: manifest.Release{Source: source}, Images: []manifest.Image{im}, Verification: &manifest.Verification{Attestations: got}}
	if err := keyed(t, trust(wf)).VerifyEmbedded(ctx, m); err != nil {
		t.Errorf("VerifyEmbedded(keyless) = %v", err)
	}
	other := strings.Replace(wf, "release.yml", "evil.yml", 1)
	if _, err := keyed(t, trust(other)).Verify(ctx, []manifest.Image{im}, source); check(t, err) != provenance.CheckSignature {
		t.Errorf("Verify(keyless, another workflow's identity) = %v, want a signature refusal", err)
	}
}

func TestVerifyOptions(t *testing.T) {
	ctx := context.Background()
	key := signature.Options{Key: sigtest.Key(t)}
	reg := sigtest.NewRegistry(t)
	d := reg.PushImage(t, "store/web", "v1")
	im := sigtest.Pin(t, "web", d)
	v := keyed(t, key)
	for _, src := range []*manifest.BuildSource{nil, {Repository: repo}, {Commit: commit}} {
		var ve *manifest.ValidationError
		if _, err := v.Verify(ctx, []manifest.Image{im}, src); !errors.As(err, &ve) || ve.Field != "release.source" {
			t.Errorf("Verify(source %+v) = %v, want a release.source validation error", src, err)
		}
	}
	if _, err := provenance.New(provenance.Options{}); err == nil {
		t.Error("New(no key, no identity) = nil error")
	}
	// A registry that cannot be reached is not a yes, nor a refusal.
	reg.Close()
	if _, err := v.Verify(ctx, []manifest.Image{im}, source); !verdict.IsUnavailable(err) || verdict.IsMismatch(err) {
		t.Errorf("Verify(registry down) = %v, want unavailable", err)
	}
	// No embedded material for the digest is a refusal, not a registry call.
	m := &manifest.Manifest{Release: manifest.Release{Source: source}, Images: []manifest.Image{im}}
	if c := check(t, v.VerifyEmbedded(ctx, m)); c != provenance.CheckMissing {
		t.Errorf("VerifyEmbedded(nothing embedded) = %q, want missing", c)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// pushImage pushes a random image to host/repo:tag and returns its digest
// reference.
func pushImage(t *testing.T, host, repo, tag string) name.Digest {
	t.Helper()
	img, err := memregistry.PushImage(host+"/"+repo+":"+tag, 256)
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.NewRepository(host + "/" + repo)
	if err != nil {
		t.Fatal(err)
	}
	return r.Digest(d.String())
}

// TestVerifyEmbeddedAttacks: embedded material an attacker who can edit
// the manifest before it is signed, or a builder's other output, might
// try: a valid envelope filed under another image's digest, material for
// a digest the manifest does not pin, an envelope whose payload type is
// not in-toto, and envelopes with two signatures.
func TestVerifyEmbeddedAttacks(t *testing.T) {
	ctx := context.Background()
	reg := sigtest.NewRegistry(t)
	key, otherKey := sigtest.Key(t), sigtest.Key(t)
	v := keyed(t, signature.Options{Key: key})
	web, api := reg.PushImage(t, "store/web", "v1"), reg.PushImage(t, "store/api", "v1")
	webIm, apiIm := sigtest.Pin(t, "web", web), sigtest.Pin(t, "api", api)
	envelope := func(sv sigsig.SignerVerifier, payloadType string, d name.Digest) []byte {
		env, err := dsse.WrapSigner(sv, payloadType).SignMessage(bytes.NewReader(sigtest.Provenance(t, repo, commit, d)))
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	// twoSigs is env with the signatures of other added after its own.
	twoSigs := func(env, other []byte) []byte {
		var e, o map[string]any
		if err := json.Unmarshal(env, &e); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(other, &o); err != nil {
			t.Fatal(err)
		}
		e["signatures"] = append(e["signatures"].([]any), o["signatures"].([]any)...)
		out, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	embed := func(d name.Digest, content []byte) manifest.EmbeddedAttestation {
		dg, err := manifest.ParseDigest(d.DigestStr())
		if err != nil {
			t.Fatal(err)
		}
		return manifest.EmbeddedAttestation{Digest: dg, MediaType: manifest.AttestationDSSE, Content: content}
	}
	// bundle is a Sigstore bundle holding an envelope of payloadType
	// (signed by no one: the payload type is refused first).
	bundle := func(d name.Digest, payloadType string) manifest.EmbeddedAttestation {
		b, err := json.Marshal(map[string]any{
			"mediaType":            manifest.AttestationBundle,
			"verificationMaterial": map[string]any{"publicKey": map[string]any{"hint": "builder"}},
			"dsseEnvelope": map[string]any{"payload": base64.StdEncoding.EncodeToString(sigtest.Provenance(t, repo, commit, d)),
				"payloadType": payloadType, "signatures": []any{map[string]any{"sig": "AAAA"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		a := embed(d, b)
		a.MediaType = manifest.AttestationBundle
		return a
	}
	good := envelope(key, types.IntotoPayloadType, web)
	garbled := bytes.Replace(envelope(otherKey, types.IntotoPayloadType, web), []byte(`"sig":"`), []byte(`"sig":"AAAA`), 1)
	for _, tt := range []struct {
		name   string
		images []manifest.Image
		atts   []manifest.EmbeddedAttestation
		want   provenance.Check
		msg    string // in the refusal
	}{
		{"web's own", []manifest.Image{webIm}, []manifest.EmbeddedAttestation{embed(web, good)}, "", ""},
		{"api's valid envelope filed under web's digest", []manifest.Image{webIm, apiIm},
			[]manifest.EmbeddedAttestation{embed(web, envelope(key, types.IntotoPayloadType, api)), embed(api, envelope(key, types.IntotoPayloadType, api))}, provenance.CheckSubject, "sha256:" + api.DigestStr()[len("sha256:"):]},
		{"material only for a digest the manifest does not pin", []manifest.Image{webIm},
			[]manifest.EmbeddedAttestation{embed(api, envelope(key, types.IntotoPayloadType, api))}, provenance.CheckMissing, "no provenance attestation"},
		{"a payload type that is not in-toto", []manifest.Image{webIm}, []manifest.EmbeddedAttestation{embed(web, envelope(key, "application/json", web))}, provenance.CheckSignature, "invalid payloadType"},
		{"a Sigstore bundle whose payload type is not in-toto", []manifest.Image{webIm}, []manifest.EmbeddedAttestation{bundle(web, "application/json")}, provenance.CheckSignature, `payload type is "application/json"`},
		{"two signatures, the builder's and a bad one", []manifest.Image{webIm}, []manifest.EmbeddedAttestation{embed(web, twoSigs(good, garbled))}, "", ""},
		{"two signatures, neither the builder's", []manifest.Image{webIm},
			[]manifest.EmbeddedAttestation{embed(web, twoSigs(envelope(otherKey, types.IntotoPayloadType, web), garbled))}, provenance.CheckSignature, "Found: 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &manifest.Manifest{Release: manifest.Release{Source: source}, Images: tt.images, Verification: &manifest.Verification{Attestations: tt.atts}}
			err := v.VerifyEmbedded(ctx, m)
			if c := check(t, err); c != tt.want {
				t.Fatalf("VerifyEmbedded = %v, want %q", err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("VerifyEmbedded = %v, want it to say %q", err, tt.msg)
			}
		})
	}
}
