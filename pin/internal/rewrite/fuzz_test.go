package rewrite

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRewrite feeds every format arbitrary bytes: parsing never panics,
// and a rewrite of what parsed either fails cleanly or changes exactly the
// references (Rewrite checks its own output by parsing it again).
func FuzzRewrite(f *testing.F) {
	ins, _ := filepath.Glob("testdata/in/*")
	for _, in := range ins {
		data, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		format, err := DetectFormat(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(format), data)
	}
	pin := func(ref string) (string, bool) { return ref + "@sha256:0123", true }
	f.Fuzz(func(t *testing.T, format string, data []byte) {
		file, err := Parse("fuzz", Format(format), data)
		if err != nil {
			return
		}
		out, changes, err := file.Rewrite(pin)
		if err != nil {
			return
		}
		if len(changes) > 0 && string(out) == string(data) {
			t.Errorf("%d changes but the same bytes", len(changes))
		}
	})
}
