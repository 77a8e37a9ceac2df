package termbar

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
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

// TestLogLineClearsTheBar: a log line written through Lines while a bar is
// drawn on the same terminal clears the bar first, so that the line starts
// on a clean line and never follows the bar's text; after Finish, lines
// pass as they are.
func TestLogLineClearsTheBar(t *testing.T) {
	master, tty := openPTY(t)
	got := make(chan string, 1)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil || strings.Contains(string(all), "the end") {
				got <- string(all)
				return
			}
		}
	}()
	b := Count(tty, "checking assets")
	b.Set(5, 10)
	log := Lines(tty)
	log.Write([]byte("level=INFO msg=\"a line\"\n"))
	b.Set(6, 10)
	b.Finish()
	log.Write([]byte("the end\n"))
	var s string
	select {
	case s = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was drawn on the terminal")
	}
	i := strings.Index(s, "level=INFO")
	if i < 0 || !strings.Contains(s[:i], "checking assets") {
		t.Fatalf("the terminal got %q: want the bar, then the log line", s)
	}
	// What precedes the line on its own terminal line: after the last
	// carriage return or newline, only an erase sequence may remain.
	before := s[:i]
	if j := strings.LastIndexAny(before, "\r\n"); j >= 0 {
		before = before[j+1:]
	}
	if strings.TrimSpace(strings.ReplaceAll(before, "\x1b[2K", "")) != "" {
		t.Errorf("the log line shares a terminal line with %q (all: %q)", before, s)
	}
}
