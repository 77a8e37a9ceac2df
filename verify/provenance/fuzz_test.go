package provenance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

// FuzzCheckStatement: any signed payload is checked without a panic, and
// a statement passes only when its subject names the digest and the
// release's repository is the build's own source, read here apart from
// the code under test (ownSourceOf), at the release's commit.
func FuzzCheckStatement(f *testing.F) {
	d := manifest.Digest{Algorithm: "sha256", Hex: hexA}
	src := &manifest.BuildSource{Repository: repo, Commit: commit}
	for _, seed := range [][]byte{
		st(f, nil),
		st(f, map[string]any{"predicateType": SLSAv02, "predicate": v02(repo, commit)}),
		st(f, map[string]any{"predicateType": SLSAv02, "predicate": v02("https://github.com/evil/builder", commit, dep(repo, "sha1", commit))}),
		st(f, map[string]any{"predicate": gha("https://github.com/evil/builder", repo, "gitCommit", commit)}),
		st(f, map[string]any{"predicate": slsa1(BuildTypeCloudBuild, map[string]any{"buildConfigSource": map[string]any{"repository": repo}}, dep(repo, "sha1", commit))}),
		st(f, map[string]any{"predicate": slsa1(BuildTypeBuildKit, map[string]any{"configSource": dep(repo, "sha1", commit)})}),
		st(f, map[string]any{"predicate": slsa1("https://gitlab.com/gitlab-org/gitlab-runner/-/blob/v17.4.0/PROVENANCE.md", map[string]any{"source": repo}, dep(repo, "gitCommit", commit))}),
		st(f, map[string]any{"subject": "x"}),
		[]byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":"` + hexA + `"}}],"predicateType":"https://slsa.dev/provenance/v1","predicate":null}`),
		[]byte(`[]`), []byte(`null`), []byte(``),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		e := checkStatement(payload, d, src)
		if e != nil {
			if e.Check == "" || e.Reason == "" {
				t.Fatalf("checkStatement(%q) = a refusal without a check or reason: %+v", payload, e)
			}
			return
		}
		var s statement
		if err := json.Unmarshal(payload, &s); err != nil || !subjectNames(s, d) {
			t.Fatalf("checkStatement(%q) passed a payload whose subject does not name %s", payload, d)
		}
		if !ownSourceIs(s, repo, commit) {
			t.Fatalf("checkStatement(%q) passed a payload whose own source is not %s at %s", payload, repo, commit)
		}
	})
}

// ownSourceIs reads the field where the statement's builder names its own
// source, as a generic JSON tree (not the structs checkStatement decodes
// into), and reports whether it is repository r, and whether commit c is
// named for it there or, for SLSA v1, in a resolved dependency of r.
func ownSourceIs(s statement, r, c string) bool {
	var p map[string]any
	if json.Unmarshal(s.Predicate, &p) != nil {
		return false
	}
	get := func(m any, path ...string) any {
		for _, k := range path {
			mm, ok := m.(map[string]any)
			if !ok {
				return nil
			}
			m = mm[k]
		}
		return m
	}
	str := func(v any) string { s, _ := v.(string); return s }
	same := func(uri string) bool { return uri != "" && NormalizeRepository(uri) == NormalizeRepository(r) }
	is := func(v string) bool { return strings.EqualFold(v, c) }
	if s.PredicateType == SLSAv02 {
		cs := get(p, "invocation", "configSource")
		return same(str(get(cs, "uri"))) && is(str(get(cs, "digest", "sha1")))
	}
	bt := str(get(p, "buildDefinition", "buildType"))
	ep := get(p, "buildDefinition", "externalParameters")
	var own string
	switch {
	case bt == BuildTypeGitHubActions || bt == BuildTypeSLSAGitHub:
		own = str(get(ep, "workflow", "repository"))
	case strings.HasSuffix(bt, "/PROVENANCE.md"):
		own = str(get(ep, "source"))
	case bt == BuildTypeCloudBuild:
		own = str(get(ep, "buildConfigSource", "repository"))
	case bt == BuildTypeBuildKit || bt == BuildTypeBuildKitOld:
		return same(str(get(ep, "configSource", "uri"))) && is(str(get(ep, "configSource", "digest", "sha1")))
	default:
		return false
	}
	if !same(own) {
		return false
	}
	deps, _ := get(p, "buildDefinition", "resolvedDependencies").([]any)
	for _, d := range deps {
		if same(str(get(d, "uri"))) && (is(str(get(d, "digest", "gitCommit"))) || is(str(get(d, "digest", "sha1")))) {
			return true
		}
	}
	return false
}
