package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// issueNumber is how the project's own issues are named in its history.
var issueNumber = regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)

// TestUserDocsNameNoIssues: the README and the user docs do not send a
// reader to the project's internal issue numbers, which they cannot see;
// only the benchmarks' history (a lab notebook, said so at its top) keeps
// them.
func TestUserDocsNameNoIssues(t *testing.T) {
	root := ".."
	for _, f := range markdownFiles(t, root) {
		if f == "docs/benchmarks-history.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range prose(string(b)) {
			if m := issueNumber.FindString(line); m != "" {
				t.Errorf("%s:%d names %q: say what it is, not the issue it came from", f, n, m)
			}
		}
	}
}
