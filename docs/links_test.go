package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// markdownFiles returns README.md and every markdown file under docs/,
// relative to the repository root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// prose returns the lines of a markdown document outside its fenced code
// blocks, with their 1-based numbers.
func prose(doc string) map[int]string {
	out := map[int]string{}
	fence := ""
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case fence != "" && strings.HasPrefix(trimmed, fence):
			fence = ""
		case fence == "":
			out[i+1] = line
		}
	}
	return out
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	mdLinkRE  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	codeRE    = regexp.MustCompile("`([^`]*)`")
)

// anchor is GitHub's id for a heading: the rendered text in lower case,
// without punctuation but '-' and '_', spaces made '-'.
func anchor(heading string) string {
	text := mdLinkRE.ReplaceAllString(heading, "$1")
	text = codeRE.ReplaceAllString(text, "$1")
	text = strings.NewReplacer("**", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the ids of a document's headings, numbered as GitHub
// numbers a repeated one (-1, -2, ...).
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	lines := prose(doc)
	for n := 1; n <= len(strings.Split(doc, "\n")); n++ {
		m := headingRE.FindStringSubmatch(lines[n])
		if m == nil {
			continue
		}
		a := anchor(m[1])
		if k := seen[a]; k > 0 {
			out[fmt.Sprintf("%s-%d", a, k)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestAnchor(t *testing.T) {
	cases := []struct{ heading, want string }{
		{"The boot gate: `lockstep admit`", "the-boot-gate-lockstep-admit"},
		{"The trust flags of every consumer (`admit`, `fleet check`, …)", "the-trust-flags-of-every-consumer-admit-fleet-check-"},
		{"Benchmark: pinning 100 tags (`bench/pin.sh`)", "benchmark-pinning-100-tags-benchpinsh"},
		{"systemd, cloud-init and plain hooks (`deploy/`)", "systemd-cloud-init-and-plain-hooks-deploy"},
		{"`lockstep manifest validate|digest|show|diff`", "lockstep-manifest-validatedigestshowdiff"},
		{"The release manifest format, `lockstep.dev/v1`", "the-release-manifest-format-lockstepdevv1"},
		{"[a link](x.md) and **bold**", "a-link-and-bold"},
		{"lockstep_record", "lockstep_record"},
		{"The webhook at 1,000 req/s (`bench/webhook.sh`)", "the-webhook-at-1000-reqs-benchwebhooksh"},
		{"The retry storm (`go test -run Storm ./verify/cdn`)", "the-retry-storm-go-test--run-storm-verifycdn"},
	}
	for _, c := range cases {
		if got := anchor(c.heading); got != c.want {
			t.Errorf("anchor(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

// TestLinks checks every relative link of README.md and docs/: the file
// it names exists, and a #fragment names a heading of that markdown file.
func TestLinks(t *testing.T) {
	root := ".."
	files := markdownFiles(t, root)
	if len(files) < 10 {
		t.Fatalf("found %d markdown files: %v", len(files), files)
	}
	cache := map[string]map[string]bool{}
	ids := func(file string) map[string]bool {
		if a, ok := cache[file]; ok {
			return a
		}
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		cache[file] = anchors(string(raw))
		return cache[file]
	}
	checked := 0
	for _, file := range files {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range prose(string(raw)) {
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
					if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
						t.Errorf("%s:%d: %s: no such file %s", file, n, target, dest)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !ids(dest)[frag] {
					t.Errorf("%s:%d: %s: %s has no heading #%s", file, n, target, dest, frag)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d links", checked)
	}
}
