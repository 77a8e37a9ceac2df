package provenance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

func TestNormalizeRepository(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://github.com/org/repo", "https://github.com/org/repo"},
		{"git+https://github.com/org/repo@refs/heads/main", "https://github.com/org/repo"},
		{"git+https://GitHub.com/org/repo.git@refs/tags/v1", "https://github.com/org/repo"},
		{"https://github.com/org/repo.git", "https://github.com/org/repo"},
		{"https://github.com/org/repo/", "https://github.com/org/repo"},
		{"HTTPS://GITHUB.COM/org/repo", "https://github.com/org/repo"},
		{"https://github.com/org/Repo", "https://github.com/org/Repo"}, // the path keeps its case
		{"https://github.com/org/repo-evil", "https://github.com/org/repo-evil"},
		{"https://github.com/org/repo.git.evil", "https://github.com/org/repo.git.evil"},
		{"https://github.com/org/repo/sub", "https://github.com/org/repo/sub"},
		{"https://x@github.com/org/repo", "https://github.com/org/repo"}, // userinfo is not part of the repository
	} {
		if got := NormalizeRepository(tt.in); got != tt.want {
			t.Errorf("NormalizeRepository(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

const (
	hexA   = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	hexB   = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	commit = "0123456789abcdef0123456789abcdef01234567"
	other  = "fedcba9876543210fedcba9876543210fedcba98"
	repo   = "https://github.com/lockstep-dev/store"
)

// st builds a statement; fields override the defaults (a good SLSA v1
// provenance of hexA from repo at commit).
func st(t testing.TB, fields map[string]any) []byte {
	t.Helper()
	s := map[string]any{
		"_type":         StatementV1,
		"subject":       []any{map[string]any{"name": "registry.example/store/web", "digest": map[string]string{"sha256": hexA}}},
		"predicateType": SLSAv1,
		"predicate":     gha(repo, "git+"+repo+"@refs/heads/main", "gitCommit", commit),
	}
	for k, v := range fields {
		if v == nil {
			delete(s, k)
			continue
		}
		s[k] = v
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gha is an SLSA v1 predicate as GitHub's actions/attest-build-provenance
// writes it: the workflow of workflowRepo at refs/heads/main, with a tool
// and uri at commit c (under digest key) among its resolved dependencies.
func gha(workflowRepo, uri, key, c string) map[string]any {
	return ghaAt(workflowRepo, "refs/heads/main", uri, key, c)
}

// ghaAt is gha with the workflow at ref.
func ghaAt(workflowRepo, ref, uri, key, c string) map[string]any {
	return map[string]any{"buildDefinition": map[string]any{
		"buildType":          BuildTypeGitHubActions,
		"externalParameters": map[string]any{"workflow": map[string]any{"repository": workflowRepo, "ref": ref, "path": ".github/workflows/release.yml"}},
		"resolvedDependencies": []any{
			map[string]any{"uri": "https://example.com/tool.tar.gz", "digest": map[string]string{"sha256": hexB}},
			map[string]any{"uri": uri, "digest": map[string]string{key: c}},
		}}}
}

// deps is gha for the repository and ref uri names (without git+ and
// @ref).
func deps(uri, key, c string) map[string]any {
	r, ref := strings.TrimPrefix(uri, "git+"), "refs/heads/main"
	if i := strings.LastIndex(r, "@"); i > strings.Index(r, "://")+3 {
		r, ref = r[:i], r[i+1:]
	}
	return ghaAt(r, ref, uri, key, c)
}

// slsa1 is an SLSA v1 predicate of buildType with externalParameters ep and
// resolved dependencies deps.
func slsa1(buildType string, ep map[string]any, deps ...any) map[string]any {
	return map[string]any{"buildDefinition": map[string]any{"buildType": buildType, "externalParameters": ep, "resolvedDependencies": deps}}
}

func dep(uri, key, c string) map[string]any {
	return map[string]any{"uri": uri, "digest": map[string]string{key: c}}
}

// v02 is an SLSA v0.2 predicate as slsa-github-generator writes it: the
// config source (uri at sha1 c) and materials.
func v02(uri, c string, materials ...any) map[string]any {
	return map[string]any{"builder": map[string]any{"id": "https://github.com/slsa-framework/slsa-github-generator"},
		"invocation": map[string]any{"configSource": map[string]any{"uri": uri, "digest": map[string]string{"sha1": c}, "entryPoint": ".github/workflows/release.yml"}},
		"materials":  materials}
}

func TestCheckStatement(t *testing.T) {
	d := manifest.Digest{Algorithm: "sha256", Hex: hexA}
	src := &manifest.BuildSource{Repository: repo, Commit: commit}
	subject := func(hexes ...string) []any {
		var out []any
		for _, h := range hexes {
			out = append(out, map[string]any{"name": "x", "digest": map[string]string{"sha256": h}})
		}
		return out
	}
	evil := "https://github.com/evil/builder"
	ours := "git+" + repo + "@refs/heads/main"
	for _, tt := range []struct {
		name    string
		payload []byte
		want    Check // "" passes
		msg     string
	}{
		{"SLSA v1, the release's repository and commit", st(t, nil), "", ""},
		{"SLSA v1, among other dependencies", st(t, map[string]any{"predicate": deps("git+"+repo+".git@refs/tags/v1", "gitCommit", strings.ToUpper(commit))}), "", ""},
		{"SLSA v0.2 config source", st(t, map[string]any{"predicateType": SLSAv02, "predicate": v02("git+"+repo+"@refs/heads/main", commit)}), "", ""},
		{"in-toto v0.1", st(t, map[string]any{"_type": StatementV01}), "", ""},
		{"many subjects, the digest among them", st(t, map[string]any{"subject": subject(hexB, hexB, hexA, hexB)}), "", ""},
		{"not JSON", []byte("not json"), CheckStatement, "not a JSON in-toto statement"},
		{"_type not in-toto", st(t, map[string]any{"_type": "https://example.com/Statement/v1"}), CheckStatement, `"https://example.com/Statement/v1"`},
		{"no _type", st(t, map[string]any{"_type": nil}), CheckStatement, "found none"},
		{"another digest", st(t, map[string]any{"subject": subject(hexB)}), CheckSubject, "sha256:" + hexB},
		{"no subject", st(t, map[string]any{"subject": nil}), CheckSubject, "no subject"},
		{"many subjects, not the digest", st(t, map[string]any{"subject": subject(hexB, hexB, hexB, hexB, hexB)}), CheckSubject, "and 2 more"},
		{"another predicate type", st(t, map[string]any{"predicateType": "https://spdx.dev/Document"}), CheckPredicateType, "https://spdx.dev/Document"},
		{"SLSA v1 predicate of the wrong shape", st(t, map[string]any{"predicate": map[string]any{"buildDefinition": "x"}}), CheckPredicateType, "does not parse"},
		{"another repository", st(t, map[string]any{"predicate": deps("git+https://github.com/evil/store@refs/heads/main", "gitCommit", commit)}), CheckRepository, "github.com/evil/store"},
		{"a repository whose name extends ours", st(t, map[string]any{"predicate": deps("git+"+repo+"-fork@refs/heads/main", "gitCommit", commit)}), CheckRepository, "store-fork"},
		{"no source at all", st(t, map[string]any{"predicate": map[string]any{}}), CheckRepository, "build type"},
		{"another commit", st(t, map[string]any{"predicate": deps("git+"+repo+"@refs/heads/main", "gitCommit", other)}), CheckCommit, other},
		{"v1 with sha1 instead of gitCommit", st(t, map[string]any{"predicate": deps("git+"+repo, "sha1", commit)}), "", ""},
		{"v1 with the commit under another key", st(t, map[string]any{"predicate": deps("git+"+repo, "sha256", commit)}), CheckRepository, "no commit of it"},
		{"the digest under another algorithm", st(t, map[string]any{"subject": []any{map[string]any{"name": "x", "digest": map[string]string{"sha512": hexA}}}}), CheckSubject, "sha512:" + hexA},
		{"a commit given as a prefix of the release's", st(t, map[string]any{"predicate": deps("git+"+repo+"@refs/heads/main", "gitCommit", commit[:12])}), CheckCommit, commit[:12]},
		{"a repository named ours with .git inside", st(t, map[string]any{"predicate": deps("git+"+repo+".git.evil@refs/heads/main", "gitCommit", commit)}), CheckRepository, "store.git.evil"},
		{"a repository under ours", st(t, map[string]any{"predicate": deps("git+"+repo+"/sub@refs/heads/main", "gitCommit", commit)}), CheckRepository, "store/sub"},
		{"v0.2 another commit", st(t, map[string]any{"predicateType": SLSAv02, "predicate": v02(repo, other)}), CheckCommit, other},
		// Issue 35 item 3: the release's repository and commit count only as
		// the build's own source, never as something the build used.
		{"v1: another workflow's build that used ours", st(t, map[string]any{"predicate": gha(evil, ours, "gitCommit", commit)}), CheckRepository, "evil/builder"},
		{"v1: our workflow, our repository only at another commit", st(t, map[string]any{"predicate": gha(repo, ours, "gitCommit", other)}), CheckCommit, other},
		{"v1: our repository at two commits", st(t, map[string]any{"predicate": slsa1(BuildTypeGitHubActions, map[string]any{"workflow": map[string]any{"repository": repo, "ref": "refs/heads/main"}},
			dep(ours, "gitCommit", commit), dep(ours, "gitCommit", other))}), CheckCommit, "several commits"},
		{"v1: our commit at another ref, another commit at the workflow's", st(t, map[string]any{"predicate": slsa1(BuildTypeGitHubActions, map[string]any{"workflow": map[string]any{"repository": repo, "ref": "refs/heads/main"}},
			dep("git+"+repo+"@refs/heads/old", "gitCommit", commit), dep(ours, "gitCommit", other))}), CheckCommit, other},
		{"v1: our workflow, no dependency of it", st(t, map[string]any{"predicate": slsa1(BuildTypeGitHubActions, map[string]any{"workflow": map[string]any{"repository": repo, "ref": "refs/heads/main"}},
			dep("git+"+evil+"@refs/heads/main", "gitCommit", commit))}), CheckRepository, "no commit of it"},
		{"v1: a workflow with no repository", st(t, map[string]any{"predicate": slsa1(BuildTypeGitHubActions, map[string]any{"workflow": map[string]any{"ref": "refs/heads/main"}}, dep(ours, "gitCommit", commit))}), CheckRepository, "names no repository"},
		{"v1: an unknown build type, ours among its dependencies", st(t, map[string]any{"predicate": slsa1("https://example.com/any-builder/v1", map[string]any{"repository": repo}, dep(ours, "gitCommit", commit))}), CheckRepository, "any-builder"},
		{"v1: slsa-github-generator's workflow type", st(t, map[string]any{"predicate": slsa1(BuildTypeSLSAGitHub, map[string]any{"workflow": map[string]any{"repository": repo, "ref": "refs/heads/main"}}, dep(ours, "gitCommit", commit))}), "", ""},
		{"v1: GitLab Runner", st(t, map[string]any{"predicate": slsa1("https://gitlab.com/gitlab-org/gitlab-runner/-/blob/v17.4.0/PROVENANCE.md", map[string]any{"source": repo, "entryPoint": "build"}, dep(repo, "sha1", commit))}), "", ""},
		{"v1: GitLab Runner building another project that used ours", st(t, map[string]any{"predicate": slsa1("https://gitlab.com/gitlab-org/gitlab-runner/-/blob/v17.4.0/PROVENANCE.md", map[string]any{"source": evil}, dep(repo, "sha1", commit), dep(evil, "sha1", other))}), CheckRepository, "evil/builder"},
		{"v1: Cloud Build", st(t, map[string]any{"predicate": slsa1(BuildTypeCloudBuild, map[string]any{"buildConfigSource": map[string]any{"repository": "git+" + repo, "ref": "refs/heads/main", "path": "cloudbuild.yaml"}}, dep("git+"+repo, "sha1", commit))}), "", ""},
		{"v1: Cloud Build of another repository", st(t, map[string]any{"predicate": slsa1(BuildTypeCloudBuild, map[string]any{"buildConfigSource": map[string]any{"repository": "git+" + evil, "ref": "refs/heads/main"}}, dep("git+"+repo, "sha1", commit))}), CheckRepository, "evil/builder"},
		{"v1: BuildKit", st(t, map[string]any{"predicate": slsa1(BuildTypeBuildKit, map[string]any{"configSource": dep(repo+".git#refs/heads/main", "sha1", commit)})}), "", ""},
		{"v1: BuildKit without a commit", st(t, map[string]any{"predicate": slsa1(BuildTypeBuildKitOld, map[string]any{"configSource": map[string]any{"uri": repo + ".git"}}, dep(ours, "gitCommit", commit))}), CheckCommit, "no commit"},
		{"v1: BuildKit of another context", st(t, map[string]any{"predicate": slsa1(BuildTypeBuildKit, map[string]any{"configSource": dep(evil+".git", "sha1", commit)}, dep(ours, "gitCommit", commit))}), CheckRepository, "evil/builder"},
		{"v0.2: materials only", st(t, map[string]any{"predicateType": SLSAv02, "predicate": map[string]any{"materials": []any{dep(ours, "sha1", commit)}}}), CheckRepository, "configSource"},
		{"v0.2: another config source, ours among materials", st(t, map[string]any{"predicateType": SLSAv02, "predicate": v02("git+"+evil+"@refs/heads/main", commit, dep(ours, "sha1", commit))}), CheckRepository, "evil/builder"},
		{"v0.2: our config source at another commit, ours at ours among materials", st(t, map[string]any{"predicateType": SLSAv02, "predicate": v02(ours, other, dep(ours, "sha1", commit))}), CheckCommit, other},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := checkStatement(tt.payload, d, src)
			switch {
			case tt.want == "" && e != nil:
				t.Fatalf("checkStatement = %v, want it to pass", e)
			case tt.want == "":
				return
			case e == nil:
				t.Fatalf("checkStatement passed, want a %s refusal", tt.want)
			case e.Check != tt.want:
				t.Fatalf("checkStatement = %s refusal (%v), want %s", e.Check, e, tt.want)
			}
			e.Subject = "image web"
			if !strings.Contains(e.Error(), tt.msg) {
				t.Errorf("message %q does not say %q", e.Error(), tt.msg)
			}
		})
	}
}
