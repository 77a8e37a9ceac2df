package manifest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// validatePathUnicode is ValidatePath as it was before its ASCII
// shortcuts, every check made on every path: the oracle the shortcuts are
// held to.
func validatePathUnicode(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is empty")
	case !utf8.ValidString(p):
		return fmt.Errorf("%q is not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is absolute", p)
	case strings.Contains(p, `\`):
		return fmt.Errorf("%q contains a backslash", p)
	case !norm.NFC.IsNormalString(p):
		return fmt.Errorf("%q is not in Unicode normal form C", p)
	}
	for _, c := range p {
		switch {
		case unicode.IsControl(c):
			return fmt.Errorf("%q contains a control character", p)
		case c == '%':
			return fmt.Errorf("%q contains '%%'", p)
		case unicode.Is(unicode.Cf, c):
			return fmt.Errorf("%q contains the invisible format character %U", p, c)
		case c != ' ' && unicode.In(c, unicode.Zs, unicode.Zl, unicode.Zp):
			return fmt.Errorf("%q contains the space character %U (only ' ' is allowed)", p, c)
		}
	}
	// The segments have no ASCII shortcut: ValidatePath's own check.
	return validateSegments(p)
}

// samePathAnswer fails t unless ValidatePath and the oracle give p the
// same answer, error text included.
func samePathAnswer(t *testing.T, p string) {
	t.Helper()
	got, want := ValidatePath(p), validatePathUnicode(p)
	if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
		t.Fatalf("ValidatePath(%q) = %v, every check made says %v", p, got, want)
	}
}

// TestValidatePathShortcuts holds ValidatePath's ASCII shortcuts to the
// answers of every check made: the cases that refuse, in combinations
// that test the order of the checks, non-ASCII ones beside them, then
// 300,000 random strings over the characters that matter.
func TestValidatePathShortcuts(t *testing.T) {
	for _, p := range []string{
		"", "a", "index.html", "static/app.js", "a b/c d.txt", "/abs", "/", "//", "a//b", "a/", "./a", "a/./b", "a/..",
		"..", ".", "...", "a/...", " a", "a ", "a/ b", "a /b", "a\\b", "/a\\b", "a%20b", "/a%", "a\tb", "a\nb", "\x00",
		"a\x7fb", "a\x1fb", "a\x20b", "%", "\\", "a/%/..", "a\x01/..", "a/ /b", "  ", "~/.ssh", "a:b", "a?b#c",
		"ze\u0301.html", "index\u202egnp.html", "a\u00a0b", "a\u2028b", "a\u0085b", "\xff", "é/ü", "a\u200bb",
	} {
		samePathAnswer(t, p)
	}
	const alphabet = "a./ \\%\t\x00\x7f\x1f~-_"
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 0, 12)
	for range 300_000 {
		b = b[:0]
		for range r.IntN(cap(b) + 1) {
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
		samePathAnswer(t, string(b))
	}
}

// FuzzValidatePath: the same, on what the fuzzer finds.
func FuzzValidatePath(f *testing.F) {
	for _, p := range []string{"index.html", "a/../b", " a", "a%b", "a\\b", "/a", "ze\u0301", "a\u00a0b"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) { samePathAnswer(t, p) })
}
