// Package termbar draws a progress bar on a terminal, and nothing
// anywhere else: a command's stderr redirected to a file or a CI log stays
// free of bar noise.
package termbar

import (
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// drawn holds, for each writer, the bar drawn on it now (*Bar), so that a
// log line written there clears it first (Lines).
var drawn sync.Map

// Lines returns w for log lines. On a terminal, a line written while a bar
// is drawn on w clears the bar first, so that a log line and a bar never
// share a line; the bar is drawn again, under the line, at its next move.
// Off a terminal it is w itself.
func Lines(w io.Writer) io.Writer {
	if !IsTerminal(w) {
		return w
	}
	return lines{w}
}

type lines struct{ w io.Writer }

func (l lines) Write(p []byte) (int, error) {
	if v, ok := drawn.Load(l.w); ok {
		b := v.(*Bar)
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.bar != nil {
			b.bar.Clear()
		}
	}
	return l.w.Write(p)
}

// Bar is a progress bar; a nil *Bar is silent, so callers need no checks.
type Bar struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	w     io.Writer
	desc  string
	bytes bool
}

// Bytes returns a bar counting bytes on w, or nil when w is not a
// terminal.
func Bytes(w io.Writer, desc string) *Bar { return newBar(w, desc, true) }

// Count returns a bar counting items on w, or nil when w is not a
// terminal.
func Count(w io.Writer, desc string) *Bar { return newBar(w, desc, false) }

func newBar(w io.Writer, desc string, bytes bool) *Bar {
	if !IsTerminal(w) {
		return nil
	}
	return &Bar{w: w, desc: desc, bytes: bytes}
}

// Set moves the bar to done of total. It is safe for concurrent use and
// fits the Progress callbacks of lockstep's libraries.
func (b *Bar) Set(done, total int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar == nil {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetDescription(b.desc),
			progressbar.OptionThrottle(100_000_000), // 100 ms
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionFullWidth(),
		}
		if b.bytes {
			opts = append(opts, progressbar.OptionShowBytes(true))
		}
		b.bar = progressbar.NewOptions64(total, opts...)
		drawn.Store(b.w, b)
	}
	if total != b.bar.GetMax64() {
		b.bar.ChangeMax64(total)
	}
	b.bar.Set64(done)
}

// Finish clears the bar from the terminal.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		b.bar.Finish()
		b.bar.Exit()
		drawn.CompareAndDelete(b.w, b)
	}
}
