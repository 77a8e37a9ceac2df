package termbar

import (
	"bytes"
	"os"
	"testing"
)

func TestSilentOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, w := range []interface{ Write([]byte) (int, error) }{&buf, f} {
		b := Bytes(w, "hashing")
		if b != nil {
			t.Fatalf("Bytes(%T) = %v, want nil off a terminal", w, b)
		}
		b.Set(1, 2) // a nil bar is silent, not a crash
		b.Finish()
	}
	if buf.Len() != 0 {
		t.Errorf("a bar off a terminal wrote %q", buf.String())
	}
	if fi, _ := f.Stat(); fi.Size() != 0 {
		t.Errorf("a bar on a file wrote %d bytes", fi.Size())
	}
}
