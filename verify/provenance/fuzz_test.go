package provenance

import (
	"encoding/json"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
)

// FuzzCheckStatement: any signed payload is checked without a panic, and
// a statement passes only when its subject names the digest and the
// release's repository and commit are in it.
func FuzzCheckStatement(f *testing.F) {
	d := manifest.Digest{Algorithm: "sha256", Hex: hexA}
	src := &manifest.BuildSource{Repository: repo, Commit: commit}
	for _, seed := range [][]byte{
		st(f, nil),
		st(f, map[string]any{"predicateType": SLSAv02, "predicate": map[string]any{"materials": []any{map[string]any{"uri": repo, "digest": map[string]string{"sha1": commit}}}}}),
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
	})
}
