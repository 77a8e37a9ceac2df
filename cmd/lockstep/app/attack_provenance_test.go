package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/verify/provenance"
)

// TestAttackProvenanceSource (issue 35, item 3): `record
// --require-provenance` accepts an image only when the release's
// repository and commit are the build's OWN source. Each case attests the
// image, signed by the trusted builder key (the DSSE envelope and .att
// image `cosign attest` writes), with provenance that names the release's
// repository and commit somewhere else: among the materials or resolved
// dependencies of a build of something else, at another ref, beside a
// second commit, under a build type whose source cannot be read. Each
// must exit 1 with the provenance finding and write no manifest.
func TestAttackProvenanceSource(t *testing.T) {
	t.Parallel()
	// Outside GitHub Actions, whatever the process's environment holds.
	env := noGitHub()
	const repo, commit = "https://github.com/acme/store", "0123456789abcdef0123456789abcdef01234567"
	const evil, other = "https://github.com/evil/builder", "fedcba9876543210fedcba9876543210fedcba98"
	ours := "git+" + repo + "@refs/heads/main"
	dep := func(uri, key, c string) map[string]any {
		return map[string]any{"uri": uri, "digest": map[string]string{key: c}}
	}
	v1 := func(buildType string, ep map[string]any, deps ...any) map[string]any {
		return map[string]any{"buildDefinition": map[string]any{"buildType": buildType, "externalParameters": ep, "resolvedDependencies": deps},
			"runDetails": map[string]any{"builder": map[string]any{"id": "https://github.com/actions/runner/github-hosted"}}}
	}
	workflow := func(r string) map[string]any {
		return map[string]any{"workflow": map[string]any{"repository": r, "ref": "refs/heads/main", "path": ".github/workflows/release.yml"}}
	}
	v02 := func(configURI, c string, materials ...any) map[string]any {
		p := map[string]any{"builder": map[string]any{"id": "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_container_slsa3.yml@refs/tags/v2.0.0"},
			"buildType": "https://github.com/slsa-framework/slsa-github-generator/container@v1", "materials": materials}
		if configURI != "" {
			p["invocation"] = map[string]any{"configSource": map[string]any{"uri": configURI, "digest": map[string]string{"sha1": c}, "entryPoint": ".github/workflows/release.yml"}}
		}
		return p
	}
	gitlab := "https://gitlab.com/gitlab-org/gitlab-runner/-/blob/v17.4.0/PROVENANCE.md"
	cases := []struct {
		name          string
		predicateType string
		predicate     map[string]any
		want          string // "" is accepted (exit 0)
	}{
		{"control: GitHub's workflow of the release's repository", provenance.SLSAv1, v1(provenance.BuildTypeGitHubActions, workflow(repo), dep(ours, "gitCommit", commit)), ""},
		{"control: slsa-github-generator v0.2 config source", provenance.SLSAv02, v02(ours, commit), ""},
		{"v1: another repository's workflow that checked ours out", provenance.SLSAv1, v1(provenance.BuildTypeGitHubActions, workflow(evil),
			dep("git+"+evil+"@refs/heads/main", "gitCommit", other), dep(ours, "gitCommit", commit)), "provenance repository"},
		{"v1: our workflow, our commit only at another ref", provenance.SLSAv1, v1(provenance.BuildTypeGitHubActions, workflow(repo),
			dep("git+"+repo+"@refs/heads/release", "gitCommit", commit), dep(ours, "gitCommit", other)), "provenance commit"},
		{"v1: our repository at two commits", provenance.SLSAv1, v1(provenance.BuildTypeGitHubActions, workflow(repo),
			dep(ours, "gitCommit", other), dep(ours, "gitCommit", commit)), "provenance commit"},
		{"v1: no externalParameters, ours among the dependencies", provenance.SLSAv1, v1(provenance.BuildTypeGitHubActions, nil, dep(ours, "gitCommit", commit)), "provenance repository"},
		{"v1: a build type lockstep cannot read, ours among its dependencies", provenance.SLSAv1, v1("https://example.com/buildtypes/any/v1", workflow(repo), dep(ours, "gitCommit", commit)), "provenance repository"},
		{"v1: GitLab Runner building another project", provenance.SLSAv1, v1(gitlab, map[string]any{"source": evil, "entryPoint": "build"}, dep(evil, "sha1", other), dep(repo, "sha1", commit)), "provenance repository"},
		{"v1: Cloud Build of another repository", provenance.SLSAv1, v1(provenance.BuildTypeCloudBuild, map[string]any{"buildConfigSource": map[string]any{"repository": "git+" + evil, "ref": "refs/heads/main"}},
			dep("git+"+repo, "sha1", commit)), "provenance repository"},
		{"v1: BuildKit building another context", provenance.SLSAv1, v1(provenance.BuildTypeBuildKit, map[string]any{"configSource": dep(evil+".git#main", "sha1", other)}, dep(ours, "gitCommit", commit)), "provenance repository"},
		{"v0.2: materials only", provenance.SLSAv02, v02("", "", dep(ours, "sha1", commit)), "provenance repository"},
		{"v0.2: another config source, ours among the materials", provenance.SLSAv02, v02("git+"+evil+"@refs/heads/main", other, dep(ours, "sha1", commit)), "provenance repository"},
		{"v0.2: our config source at another commit, ours at ours among the materials", provenance.SLSAv02, v02(ours, other, dep(ours, "sha1", commit)), "provenance commit"},
	}
	builder := sigtest.Key(t)
	dir := t.TempDir()
	builderPub := filepath.Join(dir, "builder.pub")
	if err := os.WriteFile(builderPub, sigtest.PublicPEM(t, builder), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range cases {
		t.Run("class provenance/"+tt.name, func(t *testing.T) {
			r := sigtest.NewRelease(t, nil)
			hex := r.Index.DigestStr()[len("sha256:"):]
			statement, err := json.Marshal(map[string]any{
				"_type":         provenance.StatementV1,
				"subject":       []any{map[string]any{"name": r.Index.Context().Name(), "digest": map[string]string{"sha256": hex}}},
				"predicateType": tt.predicateType,
				"predicate":     tt.predicate,
			})
			if err != nil {
				t.Fatal(err)
			}
			sigtest.AttestImage(t, r.Index, builder, statement, nil, nil, nil)
			out := filepath.Join(t.TempDir(), "release.json")
			code, _, errOut := runIn(t, env, "record", "--release", "store-web", "--generation", "3", "--image", "web="+r.Index.String(), "-o", out,
				"--source-repository", repo, "--source-commit", commit, "--require-provenance", "--embed-attestations", "--provenance-key", builderPub)
			_, statErr := os.Stat(out)
			if tt.want == "" {
				if code != 0 || statErr != nil {
					t.Fatalf("exit %d, manifest %v; want 0 and a manifest\n%s", code, statErr, errOut)
				}
				return
			}
			if code != 1 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d; want 1 with %q\n%s", code, tt.want, errOut)
			}
			if !os.IsNotExist(statErr) {
				t.Errorf("a refused record wrote %s (%v)", out, statErr)
			}
		})
	}
}
