package demo

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// CommandLine is the shell line that runs argv with env ("NAME=value")
// in its environment: each word quoted as a POSIX shell needs it, so that
// the shell hands the program exactly argv.
func CommandLine(env, argv []string) string {
	words := make([]string, 0, len(env)+len(argv))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		words = append(words, name+"="+Quote(value))
	}
	for _, a := range argv {
		words = append(words, Quote(a))
	}
	return strings.Join(words, " ")
}

// Quote is s as one word of a POSIX shell: as it is when it holds only
// characters no shell treats specially, else in single quotes, a single
// quote in s ending them, escaped, and opening them again.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// indenter writes what a command prints to w, each line indented under
// the command; an empty line stays empty. It is safe for the command's
// stdout and stderr to write at once.
type indenter struct {
	mu      sync.Mutex
	w       io.Writer
	partial []byte
}

func (in *indenter) Write(p []byte) (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.partial = append(in.partial, p...)
	for {
		i := bytes.IndexByte(in.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		in.line(in.partial[:i])
		in.partial = in.partial[i+1:]
	}
}

// flush ends a last line that has no newline.
func (in *indenter) flush() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.partial) > 0 {
		in.line(in.partial)
		in.partial = nil
	}
}

func (in *indenter) line(b []byte) {
	if len(b) == 0 {
		io.WriteString(in.w, "\n")
		return
	}
	io.WriteString(in.w, "    "+string(b)+"\n")
}

// tee keeps what one stream of a command wrote and passes it on to the
// narrative, in the order the command wrote it.
type tee struct {
	buf *bytes.Buffer
	out *indenter
}

func (t *tee) Write(p []byte) (int, error) {
	t.out.mu.Lock()
	t.buf.Write(p)
	t.out.mu.Unlock()
	return t.out.Write(p)
}
