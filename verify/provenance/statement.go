package provenance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
)

// The in-toto statement types and SLSA provenance predicate types that
// count.
const (
	StatementV1  = "https://in-toto.io/Statement/v1"
	StatementV01 = "https://in-toto.io/Statement/v0.1"
	SLSAv1       = "https://slsa.dev/provenance/v1"
	SLSAv02      = "https://slsa.dev/provenance/v0.2"
)

// statement is the part of an in-toto statement that is checked.
type statement struct {
	Type    string `json:"_type"`
	Subject []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// material is a source the build used: a URI and its digests.
type material struct {
	URI    string            `json:"uri"`
	Digest map[string]string `json:"digest"`
}

// The SLSA v1 build types whose own source lockstep reads, each from its
// externalParameters (see ownSourceV1).
const (
	// BuildTypeGitHubActions is GitHub's actions/attest-build-provenance
	// (GitHub artifact attestations).
	BuildTypeGitHubActions = "https://actions.github.io/buildtypes/workflow/v1"
	// BuildTypeSLSAGitHub is slsa-github-generator's SLSA v1 workflow type.
	BuildTypeSLSAGitHub = "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1"
	// BuildTypeCloudBuild is Google Cloud Build's.
	BuildTypeCloudBuild = "https://cloud.google.com/build/gcb-buildtypes/google-worker/v1"
	// BuildTypeBuildKit is BuildKit's (docker buildx --provenance).
	BuildTypeBuildKit = "https://github.com/moby/buildkit/blob/master/docs/attestations/slsa-definitions.md"
	// BuildTypeBuildKitOld is what BuildKit wrote before v0.12.
	BuildTypeBuildKitOld = "https://mobyproject.org/buildkit@v1"
	// gitLabBuildType is the start and end of GitLab Runner's build type,
	// https://gitlab.com/gitlab-org/gitlab-runner/-/blob/VERSION/PROVENANCE.md.
	gitLabBuildType, gitLabBuildTypeEnd = "https://gitlab.com/gitlab-org/gitlab-runner/-/blob/", "/PROVENANCE.md"
)

// predicateV1 is what is read of an SLSA v1 provenance predicate: the
// build type, the external parameters each known build type names its
// source in, and the resolved dependencies (where the commit of a
// workflow's repository is).
type predicateV1 struct {
	BuildDefinition struct {
		BuildType          string `json:"buildType"`
		ExternalParameters struct {
			// GitHub Actions (both workflow build types).
			Workflow struct {
				Repository string `json:"repository"`
				Ref        string `json:"ref"`
			} `json:"workflow"`
			// GitLab Runner: the project's URL.
			Source string `json:"source"`
			// Cloud Build: where the build configuration was read.
			BuildConfigSource struct {
				Repository string `json:"repository"`
				Ref        string `json:"ref"`
			} `json:"buildConfigSource"`
			// BuildKit: the build's context, with its commit.
			ConfigSource material `json:"configSource"`
		} `json:"externalParameters"`
		ResolvedDependencies []material `json:"resolvedDependencies"`
	} `json:"buildDefinition"`
}

// predicateV02 is what is read of an SLSA v0.2 provenance predicate: the
// invocation's config source, the source the builder ran the build from
// (slsa-github-generator, BuildKit). Materials are not read: they list
// everything the build used, the source of something else too.
type predicateV02 struct {
	Invocation struct {
		ConfigSource material `json:"configSource"`
	} `json:"invocation"`
}

// ownSource is the build's own source as its provenance says: the
// repository and the commit built (commit "" when the predicate names the
// repository and no single commit of it).
type ownSource struct {
	repository, commit string
	// where says which fields named it, for messages.
	where string
}

// ownSourceV1 reads the build's own source from an SLSA v1 predicate, by
// its build type: the repository from externalParameters (GitHub
// Actions: workflow.repository; GitLab: source; Cloud Build:
// buildConfigSource.repository; BuildKit: configSource.uri with its
// digest.sha1), and its commit from the resolved dependency of that same
// repository (digest.gitCommit, or sha1; GitHub's at workflow.ref when its
// URI names a ref). A repository among the resolved dependencies that
// externalParameters does not name is not the build's source, whatever
// commit it has. An unknown build type, or a known one without its
// fields, names no source.
func ownSourceV1(p predicateV1) (ownSource, *Error) {
	bd := p.BuildDefinition
	ep := bd.ExternalParameters
	bt := bd.BuildType
	var repo, ref, where string
	switch {
	case bt == BuildTypeGitHubActions || bt == BuildTypeSLSAGitHub:
		repo, ref, where = ep.Workflow.Repository, ep.Workflow.Ref, "externalParameters.workflow"
	case strings.HasPrefix(bt, gitLabBuildType) && strings.HasSuffix(bt, gitLabBuildTypeEnd):
		repo, where = ep.Source, "externalParameters.source"
	case bt == BuildTypeCloudBuild:
		repo, ref, where = ep.BuildConfigSource.Repository, ep.BuildConfigSource.Ref, "externalParameters.buildConfigSource"
	case bt == BuildTypeBuildKit || bt == BuildTypeBuildKitOld:
		cs := ep.ConfigSource
		if cs.URI == "" {
			return ownSource{}, noSource("the BuildKit provenance names no externalParameters.configSource.uri")
		}
		return ownSource{repository: cs.URI, commit: cs.Digest["sha1"], where: "externalParameters.configSource"}, nil
	default:
		return ownSource{}, &Error{Check: CheckRepository, Reason: "the SLSA v1 provenance is of a build type whose own source lockstep cannot read (a repository among its dependencies may be anything the build used)",
			Want: "buildType " + BuildTypeGitHubActions + ", " + BuildTypeSLSAGitHub + ", GitLab Runner's, " + BuildTypeCloudBuild + " or BuildKit's", Got: "buildType " + quoteOrNone(bt)}
	}
	if repo == "" {
		return ownSource{}, noSource(fmt.Sprintf("the provenance (buildType %s) names no repository in %s", bt, where))
	}
	src := ownSource{repository: repo, where: where + " and its resolvedDependencies entry"}
	want := NormalizeRepository(repo)
	var commits []string
	for _, d := range bd.ResolvedDependencies {
		if NormalizeRepository(d.URI) != want {
			continue
		}
		if r := uriRef(d.URI); r != "" && ref != "" && strings.HasPrefix(ref, "refs/") && r != ref {
			continue // the repository at another ref: a dependency, not the build's checkout
		}
		c := d.Digest["gitCommit"]
		if c == "" {
			c = d.Digest["sha1"]
		}
		if c != "" && !slices.Contains(commits, strings.ToLower(c)) {
			commits = append(commits, strings.ToLower(c))
		}
	}
	switch len(commits) {
	case 0:
		return ownSource{}, noSource(fmt.Sprintf("the provenance names its repository %s in %s but no commit of it among resolvedDependencies", repo, where))
	case 1:
		src.commit = commits[0]
		return src, nil
	}
	return ownSource{}, &Error{Check: CheckCommit, Reason: "the provenance names several commits of its own repository " + repo,
		Want: "one commit", Got: "commit " + strings.Join(commits, ", ")}
}

// uriRef is the ref an SPDX-style git URI names after "@" in its path
// ("git+https://host/org/repo@refs/heads/main"), "" for none.
func uriRef(uri string) string {
	u, err := url.Parse(strings.TrimPrefix(uri, "git+"))
	if err != nil {
		return ""
	}
	if i := strings.Index(u.Path, "@"); i >= 0 {
		return u.Path[i+1:]
	}
	return ""
}

// ownSourceV02 reads the build's own source from an SLSA v0.2 predicate:
// invocation.configSource's uri and digest.sha1.
func ownSourceV02(p predicateV02) (ownSource, *Error) {
	cs := p.Invocation.ConfigSource
	if cs.URI == "" {
		return ownSource{}, noSource("the SLSA v0.2 provenance names no invocation.configSource.uri (its materials are what the build used, not its source)")
	}
	return ownSource{repository: cs.URI, commit: cs.Digest["sha1"], where: "invocation.configSource"}, nil
}

func noSource(reason string) *Error {
	return &Error{Check: CheckRepository, Reason: reason, Want: "the build's own source repository and commit", Got: "no source repository with a commit"}
}

// checkStatement checks a verified payload against digest d and the
// release's source: the statement's type, its subject, its predicate type,
// then the repository and the commit. It returns nil when all pass, or the
// failed check with its reason.
func checkStatement(payload []byte, d manifest.Digest, src *manifest.BuildSource) *Error {
	var st statement
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&st); err != nil {
		return &Error{Check: CheckStatement, Reason: "the signed payload is not a JSON in-toto statement", Err: err}
	}
	if st.Type != StatementV1 && st.Type != StatementV01 {
		return &Error{Check: CheckStatement, Reason: "the signed payload is not an in-toto statement", Want: "_type " + StatementV1, Got: quoteOrNone(st.Type)}
	}
	if !subjectNames(st, d) {
		return &Error{Check: CheckSubject, Reason: "the statement is about other artifacts", Want: "subject " + d.String(), Got: subjects(st)}
	}
	var own ownSource
	var e *Error
	switch st.PredicateType {
	case SLSAv1:
		var p predicateV1
		if err := json.Unmarshal(st.Predicate, &p); err != nil {
			return &Error{Check: CheckPredicateType, Reason: "the SLSA v1 predicate does not parse", Err: err}
		}
		own, e = ownSourceV1(p)
	case SLSAv02:
		var p predicateV02
		if err := json.Unmarshal(st.Predicate, &p); err != nil {
			return &Error{Check: CheckPredicateType, Reason: "the SLSA v0.2 predicate does not parse", Err: err}
		}
		own, e = ownSourceV02(p)
	default:
		return &Error{Check: CheckPredicateType, Reason: "the predicate is not SLSA provenance", Want: SLSAv1 + " or " + SLSAv02, Got: quoteOrNone(st.PredicateType)}
	}
	if e != nil {
		return e
	}
	return checkSource(own, src)
}

func subjectNames(st statement, d manifest.Digest) bool {
	for _, s := range st.Subject {
		if v, ok := s.Digest[d.Algorithm]; ok && strings.EqualFold(v, d.Hex) {
			return true
		}
	}
	return false
}

// subjects lists a statement's subject digests, for a message (the first
// three).
func subjects(st statement) string {
	var names []string
	for _, s := range st.Subject {
		for alg, hex := range s.Digest {
			names = append(names, alg+":"+hex)
		}
	}
	sort.Strings(names)
	switch {
	case len(names) == 0:
		return "no subject"
	case len(names) > 3:
		names = append(names[:3], fmt.Sprintf("and %d more", len(names)-3))
	}
	return "subject " + strings.Join(names, ", ")
}

// checkSource checks the build's own source against the release's: the
// same repository (NormalizeRepository), then the same commit.
func checkSource(own ownSource, src *manifest.BuildSource) *Error {
	if NormalizeRepository(own.repository) != NormalizeRepository(src.Repository) {
		return &Error{Check: CheckRepository, Reason: "the provenance's own source (" + own.where + ") is another repository", Want: src.Repository, Got: own.repository}
	}
	if own.commit == "" {
		return &Error{Check: CheckCommit, Reason: "the provenance names no commit of its source " + own.repository + " (" + own.where + ")", Want: "commit " + src.Commit, Got: "no commit"}
	}
	if !strings.EqualFold(own.commit, src.Commit) {
		return &Error{Check: CheckCommit, Reason: "the provenance names another commit of " + src.Repository, Want: "commit " + src.Commit, Got: "commit " + own.commit}
	}
	return nil
}

// NormalizeRepository is the form of a source repository URL that its
// spellings share: without a "git+" prefix, an "@ref" suffix, a ".git"
// suffix or a trailing slash, with the scheme and host in lower case.
// "git+https://GitHub.com/org/repo@refs/heads/main" and
// "https://github.com/org/repo.git" are both "https://github.com/org/repo".
// The path keeps its case.
func NormalizeRepository(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "git+")
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git")
	}
	p := u.Path
	if i := strings.Index(p, "@"); i >= 0 {
		p = p[:i]
	}
	p = strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + p
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}
