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
		"predicate": map[string]any{"buildDefinition": map[string]any{"resolvedDependencies": []any{
			map[string]any{"uri": "git+" + repo + "@refs/heads/main", "digest": map[string]string{"gitCommit": commit}},
		}}},
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

func deps(uri, key, c string) map[string]any {
	return map[string]any{"buildDefinition": map[string]any{"resolvedDependencies": []any{
		map[string]any{"uri": "https://example.com/tool.tar.gz", "digest": map[string]string{"sha256": hexB}},
		map[string]any{"uri": uri, "digest": map[string]string{key: c}},
	}}}
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
	v02 := func(uri, c string) map[string]any {
		return map[string]any{"builder": map[string]any{"id": "https://github.com/slsa-framework/slsa-github-generator"},
			"materials": []any{map[string]any{"uri": uri, "digest": map[string]string{"sha1": c}}}}
	}
	for _, tt := range []struct {
		name    string
		payload []byte
		want    Check // "" passes
		msg     string
	}{
		{"SLSA v1, the release's repository and commit", st(t, nil), "", ""},
		{"SLSA v1, among other dependencies", st(t, map[string]any{"predicate": deps("git+"+repo+".git@refs/tags/v1", "gitCommit", strings.ToUpper(commit))}), "", ""},
		{"SLSA v0.2 materials", st(t, map[string]any{"predicateType": SLSAv02, "predicate": v02("git+"+repo+"@refs/heads/main", commit)}), "", ""},
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
		{"no source at all", st(t, map[string]any{"predicate": map[string]any{}}), CheckRepository, "no source repository"},
		{"another commit", st(t, map[string]any{"predicate": deps("git+"+repo+"@refs/heads/main", "gitCommit", other)}), CheckCommit, other},
		{"v1 with sha1 instead of gitCommit", st(t, map[string]any{"predicate": deps("git+"+repo, "sha1", commit)}), CheckRepository, "no source repository"},
		{"the digest under another algorithm", st(t, map[string]any{"subject": []any{map[string]any{"name": "x", "digest": map[string]string{"sha512": hexA}}}}), CheckSubject, "sha512:" + hexA},
		{"a commit given as a prefix of the release's", st(t, map[string]any{"predicate": deps("git+"+repo+"@refs/heads/main", "gitCommit", commit[:12])}), CheckCommit, commit[:12]},
		{"a repository named ours with .git inside", st(t, map[string]any{"predicate": deps("git+"+repo+".git.evil@refs/heads/main", "gitCommit", commit)}), CheckRepository, "store.git.evil"},
		{"a repository under ours", st(t, map[string]any{"predicate": deps("git+"+repo+"/sub@refs/heads/main", "gitCommit", commit)}), CheckRepository, "store/sub"},
		{"v0.2 another commit", st(t, map[string]any{"predicateType": SLSAv02, "predicate": v02(repo, other)}), CheckCommit, other},
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
