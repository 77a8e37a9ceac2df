package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
	"github.com/lockstep-dev/lockstep/verify/provenance"
)

// TestProvenanceEmbedded: `admit --require-provenance` admits an instance
// whose image's provenance, embedded in the signed manifest, names the
// manifest's own digest and source, with no registry request; it refuses
// (provenance) a manifest that embeds nothing for the image, names no
// source, names another commit than the attestation, or embeds tampered
// material.
func TestProvenanceEmbedded(t *testing.T) {
	const repo, commit = "https://github.com/acme/store", "0123456789abcdef0123456789abcdef01234567"
	r := sigtest.NewRelease(t, nil)
	builder := sigtest.Key(t)
	sigtest.AttestImage(t, r.Index, builder, sigtest.Provenance(t, repo, commit, r.Index), nil, nil, nil)
	pv, err := provenance.New(provenance.Options{Trust: signature.Options{Key: builder}})
	if err != nil {
		t.Fatal(err)
	}
	src := &manifest.BuildSource{Repository: repo, Commit: commit}
	atts, err := pv.Verify(context.Background(), []manifest.Image{r.Image}, src)
	if err != nil {
		t.Fatal(err)
	}
	mv, err := signature.NewVerifier(signature.Options{Key: r.Key})
	if err != nil {
		t.Fatal(err)
	}
	check := func(edit func(*manifest.Manifest)) admission.Decision {
		path := r.WriteManifestFunc(t, edit)
		client := transport.New(transport.Policy{MaxAttempts: 1, Timeout: 2 * time.Second})
		return admission.Check(context.Background(), admission.Config{
			CDN: cdngate.Checker{}, Source: manifest.FileSource{Path: path}, Verifier: mv, Provenance: pv,
			Image: "web", Running: running.Given{Value: r.Platforms["linux/amd64"].DigestStr()}, Platform: "linux/amd64",
			Client: client, Timeout: 10 * time.Second,
		})
	}
	embed := func(s *manifest.BuildSource, a []manifest.EmbeddedAttestation) func(*manifest.Manifest) {
		return func(m *manifest.Manifest) {
			m.Release.Source = s
			if a != nil {
				m.Verification = &manifest.Verification{Attestations: a}
			}
		}
	}

	before := r.Reg.Requests()
	d := check(embed(src, atts))
	if !d.Allowed {
		t.Fatalf("embedded provenance of the release's commit: refused\n%s", dump(d))
	}
	if n := r.Reg.Requests() - before; n != 0 {
		t.Errorf("the gate sent %d registry requests, want none", n)
	}

	tampered := append([]manifest.EmbeddedAttestation(nil), atts...)
	tampered[0].Content = []byte(strings.Replace(string(tampered[0].Content), `"payload":"`, `"payload":"AAAA`, 1))
	for _, tc := range []struct {
		name string
		edit func(*manifest.Manifest)
		say  string
	}{
		{"nothing embedded", embed(src, nil), "provenance missing"},
		{"no source", embed(nil, atts), "names no source repository and commit"},
		{"another commit", embed(&manifest.BuildSource{Repository: repo, Commit: "fedcba9876543210fedcba9876543210fedcba98"}, atts), "provenance commit"},
		{"another repository", embed(&manifest.BuildSource{Repository: "https://github.com/acme/other", Commit: commit}, atts), "provenance repository"},
		{"tampered material", embed(src, tampered), "provenance signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := check(tc.edit)
			if d.Allowed || len(d.Findings) == 0 {
				t.Fatalf("admitted, want a provenance refusal\n%s", dump(d))
			}
			found := false
			for _, f := range d.Findings {
				if f.Kind == admission.KindProvenance && strings.Contains(f.Message, tc.say) {
					found = true
				}
			}
			if !found {
				t.Errorf("no provenance finding saying %q\n%s", tc.say, dump(d))
			}
		})
	}
}
