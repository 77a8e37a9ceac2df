package provenance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
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

// predicateV1 is what is read of an SLSA v1 provenance predicate.
type predicateV1 struct {
	BuildDefinition struct {
		ResolvedDependencies []material `json:"resolvedDependencies"`
	} `json:"buildDefinition"`
}

// predicateV02 is what is read of an SLSA v0.2 provenance predicate:
// materials, and the invocation's config source (where
// slsa-github-generator names the repository).
type predicateV02 struct {
	Materials  []material `json:"materials"`
	Invocation struct {
		ConfigSource material `json:"configSource"`
	} `json:"invocation"`
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
	var mats []material
	switch st.PredicateType {
	case SLSAv1:
		var p predicateV1
		if err := json.Unmarshal(st.Predicate, &p); err != nil {
			return &Error{Check: CheckPredicateType, Reason: "the SLSA v1 predicate does not parse", Err: err}
		}
		mats = commits(p.BuildDefinition.ResolvedDependencies, "gitCommit")
	case SLSAv02:
		var p predicateV02
		if err := json.Unmarshal(st.Predicate, &p); err != nil {
			return &Error{Check: CheckPredicateType, Reason: "the SLSA v0.2 predicate does not parse", Err: err}
		}
		mats = commits(append(p.Materials, p.Invocation.ConfigSource), "sha1")
	default:
		return &Error{Check: CheckPredicateType, Reason: "the predicate is not SLSA provenance", Want: SLSAv1 + " or " + SLSAv02, Got: quoteOrNone(st.PredicateType)}
	}
	return checkSource(mats, src)
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

// commits keeps the materials that name a commit under key, with it
// under "commit".
func commits(ms []material, key string) []material {
	var out []material
	for _, m := range ms {
		if c := m.Digest[key]; m.URI != "" && c != "" {
			out = append(out, material{URI: m.URI, Digest: map[string]string{"commit": c}})
		}
	}
	return out
}

// checkSource finds the release's repository among the materials and
// checks its commit.
func checkSource(mats []material, src *manifest.BuildSource) *Error {
	want := NormalizeRepository(src.Repository)
	var found, other []string
	for _, m := range mats {
		if NormalizeRepository(m.URI) != want {
			other = append(other, m.URI)
			continue
		}
		if strings.EqualFold(m.Digest["commit"], src.Commit) {
			return nil
		}
		found = append(found, m.Digest["commit"])
	}
	if len(found) > 0 {
		return &Error{Check: CheckCommit, Reason: "the provenance names another commit of " + src.Repository, Want: "commit " + src.Commit, Got: "commit " + strings.Join(found, ", ")}
	}
	got := "no source repository with a commit"
	if len(other) > 0 {
		got = strings.Join(other, ", ")
	}
	return &Error{Check: CheckRepository, Reason: "the provenance names another source repository", Want: src.Repository, Got: got}
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
