package manifest

import (
	"math/rand/v2"
	"testing"
)

// samePathAnswer fails t unless the ASCII fast path and the general one
// give p the same answer, error text included.
func samePathAnswer(t *testing.T, p string) {
	t.Helper()
	fast, slow := validateASCIIPath(p), validatePath(p)
	if (fast == nil) != (slow == nil) || fast != nil && fast.Error() != slow.Error() {
		t.Fatalf("ValidatePath(%q): the ASCII path says %v, the general one %v", p, fast, slow)
	}
}

// TestValidateASCIIPath holds validateASCIIPath to validatePath's answers:
// the cases that refuse, in combinations that test the order of the
// checks, then 300,000 random ASCII strings over the characters that
// matter.
func TestValidateASCIIPath(t *testing.T) {
	for _, p := range []string{
		"", "a", "index.html", "static/app.js", "a b/c d.txt", "/abs", "/", "//", "a//b", "a/", "./a", "a/./b", "a/..",
		"..", ".", "...", "a/...", " a", "a ", "a/ b", "a /b", "a\\b", "/a\\b", "a%20b", "/a%", "a\tb", "a\nb", "\x00",
		"a\x7fb", "a\x1fb", "a\x20b", "%", "\\", "a/%/..", "a\x01/..", "a/ /b", "  ", "~/.ssh", "a:b", "a?b#c",
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

// FuzzValidateASCIIPath: the same, on what the fuzzer finds.
func FuzzValidateASCIIPath(f *testing.F) {
	for _, p := range []string{"index.html", "a/../b", " a", "a%b", "a\\b", "/a"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if isASCII(p) {
			samePathAnswer(t, p)
		}
	})
}
