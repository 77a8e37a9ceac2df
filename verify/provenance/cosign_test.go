package provenance_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/provenance"
)

// slsa02Predicate is an SLSA v0.2 predicate naming repo at commit.
func slsa02Predicate(repo, commit string) map[string]any {
	return map[string]any{
		"builder":    map[string]any{"id": "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/builder.yml@refs/tags/v1.9.0"},
		"buildType":  "https://github.com/slsa-framework/slsa-github-generator/container@v1",
		"invocation": map[string]any{"configSource": map[string]any{"uri": "git+" + repo + "@refs/heads/main", "digest": map[string]string{"sha1": commit}, "entryPoint": ".github/workflows/release.yml"}},
		"materials":  []any{map[string]any{"uri": "git+" + repo + "@refs/heads/main", "digest": map[string]string{"sha1": commit}}},
	}
}

// TestCosignAttestations: provenance that the real cosign CLI attested,
// as cosign's .att tag and as a Sigstore bundle referrer
// (--new-bundle-format), in go-containerregistry's registry with the OCI
// referrers API and without it (the referrers tag schema), is found and
// bound to the release's source; what does not belong is refused, each
// with its check.
func TestCosignAttestations(t *testing.T) {
	cosign := sigtest.RequireCosign(t)
	ctx := context.Background()
	dir, otherDir := t.TempDir(), t.TempDir()
	v := keyed(t, signature.Options{Key: cosign.Verifier(t, dir)})
	cosign.GenerateKeyPair(t, otherDir)
	predicate := func(name string, p any) string {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good1 := predicate("good-v1.json", sigtest.SLSAv1Predicate(repo, commit))
	good02 := predicate("good-v02.json", slsa02Predicate(repo, commit))
	otherCommit := predicate("other-commit.json", sigtest.SLSAv1Predicate(repo, commit2))
	otherRepo := predicate("other-repo.json", sigtest.SLSAv1Predicate("https://github.com/evil/store", commit))
	custom := predicate("custom.json", map[string]any{"scan": "clean"})
	// Issue 35, item 3: our repository and commit only among what a build
	// of something else used.
	foreign := sigtest.SLSAv1Predicate("https://github.com/evil/builder", commit2)
	bd := foreign["buildDefinition"].(map[string]any)
	bd["resolvedDependencies"] = append(bd["resolvedDependencies"].([]map[string]any), map[string]any{"uri": "git+" + repo + "@refs/heads/main", "digest": map[string]string{"gitCommit": commit}})
	usedByOther := predicate("used-by-other.json", foreign)
	materials02 := slsa02Predicate(repo, commit)
	materials02["invocation"] = map[string]any{"configSource": map[string]any{"uri": "git+https://github.com/evil/builder@refs/heads/main", "digest": map[string]string{"sha1": commit2}}}
	usedByOther02 := predicate("used-by-other-02.json", materials02)

	for _, reg := range []struct {
		name      string
		referrers bool
	}{{"referrers API", true}, {"referrers tag schema", false}} {
		t.Run(reg.name, func(t *testing.T) {
			srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(reg.referrers)))
			t.Cleanup(srv.Close)
			host := strings.TrimPrefix(srv.URL, "http://")
			for i, tt := range []struct {
				name string
				// keyDir signs (dir: the trusted key); args are cosign
				// attest's flags besides the key and image.
				keyDir string
				args   []string
				want   provenance.Check
			}{
				{"SLSA v1 in the .att tag", dir, []string{"--type", "slsaprovenance1", "--predicate", good1}, ""},
				{"SLSA v0.2 in the .att tag", dir, []string{"--type", "slsaprovenance02", "--predicate", good02}, ""},
				{"SLSA v1 as a bundle referrer", dir, []string{"--type", "slsaprovenance1", "--predicate", good1, "--new-bundle-format"}, ""},
				{"SLSA v0.2 as a bundle referrer", dir, []string{"--type", "slsaprovenance02", "--predicate", good02, "--new-bundle-format"}, ""},
				{"another commit", dir, []string{"--type", "slsaprovenance1", "--predicate", otherCommit}, provenance.CheckCommit},
				{"another commit, bundle", dir, []string{"--type", "slsaprovenance1", "--predicate", otherCommit, "--new-bundle-format"}, provenance.CheckCommit},
				{"another repository", dir, []string{"--type", "slsaprovenance1", "--predicate", otherRepo}, provenance.CheckRepository},
				{"ours among the dependencies of another build", dir, []string{"--type", "slsaprovenance1", "--predicate", usedByOther}, provenance.CheckRepository},
				{"ours among the materials of another build, bundle", dir, []string{"--type", "slsaprovenance02", "--predicate", usedByOther02, "--new-bundle-format"}, provenance.CheckRepository},
				{"another key", otherDir, []string{"--type", "slsaprovenance1", "--predicate", good1}, provenance.CheckSignature},
				{"another key, bundle", otherDir, []string{"--type", "slsaprovenance1", "--predicate", good1, "--new-bundle-format"}, provenance.CheckSignature},
				{"a predicate of another type", dir, []string{"--type", "custom", "--predicate", custom}, provenance.CheckPredicateType},
				{"none", "", nil, provenance.CheckMissing},
			} {
				t.Run(tt.name, func(t *testing.T) {
					d := pushImage(t, host, "store/web", "case"+itoa(i))
					im := sigtest.Pin(t, "web", d)
					if tt.keyDir != "" {
						attest(t, cosign, tt.keyDir, d, tt.args...)
					}
					got, err := v.Verify(ctx, []manifest.Image{im}, source)
					if c := check(t, err); c != tt.want {
						t.Fatalf("Verify = %v, want %q", err, tt.want)
					}
					if tt.want != "" {
						return
					}
					m := &manifest.Manifest{Release: manifest.Release{Source: source}, Images: []manifest.Image{im}, Verification: &manifest.Verification{Attestations: got}}
					if err := v.VerifyEmbedded(ctx, m); err != nil {
						t.Errorf("VerifyEmbedded(cosign's attestation) = %v", err)
					}
				})
			}
		})
	}
}

// attest runs cosign attest with the key in keyDir, uploading nothing to
// a transparency log.
func attest(t *testing.T, cosign *sigtest.Cosign, keyDir string, d name.Digest, args ...string) {
	t.Helper()
	base := []string{"attest", "--key", "cosign.key", "--tlog-upload=false", "--use-signing-config=false", "--allow-http-registry", "--allow-insecure-registry", "-y"}
	cosign.MustRun(t, keyDir, append(append(base, args...), d.String())...)
}

// TestCosignKeylessAttestation: `cosign attest` with a certificate (and
// chain) of a test CA for the GitHub workflow identity, as a keyless
// signer's, passes against that identity and the CA's trusted root,
// offline; another workflow's identity or another CA refuses (signature).
func TestCosignKeylessAttestation(t *testing.T) {
	cosign := sigtest.RequireCosign(t)
	ctx := context.Background()
	dir := t.TempDir()
	ca := sigtest.NewCA(t)
	const wf = "https://github.com/lockstep-dev/store/.github/workflows/release.yml@refs/heads/main"
	const issuer = "https://token.actions.githubusercontent.com"
	k, cert := ca.LeafKey(t, wf, issuer)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"leaf.pem":   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		"leaf.crt":   sigtest.CertPEM(t, cert),
		"chain.pem":  ca.ChainPEM(t),
		"slsa1.json": mustJSON(t, sigtest.SLSAv1Predicate(repo, commit)),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cosign.MustRun(t, dir, "import-key-pair", "--key", "leaf.pem", "--output-key-prefix", "leaf")
	reg := sigtest.NewRegistry(t)
	d := pushImage(t, reg.Host, "store/web", "keyless")
	im := sigtest.Pin(t, "web", d)
	cosign.MustRun(t, dir, "attest", "--key", "leaf.key", "--certificate", "leaf.crt", "--certificate-chain", "chain.pem",
		"--type", "slsaprovenance1", "--predicate", "slsa1.json", "--tlog-upload=false", "--use-signing-config=false",
		"--allow-http-registry", "--allow-insecure-registry", "-y", d.String())

	trust := func(identity string, cas ...*sigtest.CA) signature.Options {
		return signature.Options{Identity: &signature.Identity{Subject: identity, Issuer: issuer}, TrustedRoot: sigtest.TrustedRoot(t, cas...), IgnoreTlog: true, IgnoreSCT: true}
	}
	got, err := keyed(t, trust(wf, ca)).Verify(ctx, []manifest.Image{im}, source)
	if err != nil {
		t.Fatalf("Verify(cosign's keyless attestation) = %v", err)
	}
	if len(got) != 1 || got[0].Certificate == "" || got[0].Chain == "" {
		t.Fatalf("Verify returned %+v, want one attestation carrying cosign's certificate and chain", got)
	}
	m := &manifest.Manifest{Release: manifest.Release{Source: source}, Images: []manifest.Image{im}, Verification: &manifest.Verification{Attestations: got}}
	if err := keyed(t, trust(wf, ca)).VerifyEmbedded(ctx, m); err != nil {
		t.Errorf("VerifyEmbedded(cosign's keyless attestation) = %v", err)
	}
	for name, o := range map[string]signature.Options{
		"another workflow": trust(strings.Replace(wf, "release.yml", "evil.yml", 1), ca),
		"another CA":       trust(wf, sigtest.NewCA(t)),
	} {
		if _, err := keyed(t, o).Verify(ctx, []manifest.Image{im}, source); check(t, err) != provenance.CheckSignature {
			t.Errorf("Verify(keyless, %s) = %v, want a signature refusal", name, err)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
