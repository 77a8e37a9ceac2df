package termbar

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testenv"
)

// openPTY opens a pseudo-terminal pair: the bar draws on the terminal
// side, the test reads what it drew from the other.
func openPTY(t *testing.T) (master, tty *os.File) { return testenv.PTY(t) }

func TestDrawsOnATerminal(t *testing.T) {
	master, tty := openPTY(t)
	if !IsTerminal(tty) {
		t.Fatal("IsTerminal(a pty) = false")
	}
	b := Bytes(tty, "hashing assets")
	if b == nil {
		t.Fatal("Bytes(a terminal) = nil, want a bar")
	}
	b.Set(512<<20, 1<<30)
	b.Finish()
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		n, _ := master.Read(buf)
		got <- string(buf[:n])
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, "hashing assets") {
			t.Errorf("the bar drew %q, want its description", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the bar drew nothing on the terminal")
	}
}
