package app

import (
	"fmt"
	"strings"
)

// exits says what each exit code means for one command, by code: 0
// verified (or done), 1 mismatch or refusal, 2 usage or invalid input, 3
// could not verify. A code the command never exits with is left out.
type exits map[int]string

// helpWidth is the column the exit-code lines of a description wrap at.
const helpWidth = 104

// describe renders a command's Description, as `lockstep CMD --help`, the
// reference pages and the man pages show it: what the command does (about,
// wrapped by hand), the commands a user would type (one example a line; a
// long one continues on lines ending in " \"), and what each exit code
// means for it. TestHelpTeaches checks every command has all three and
// that every example parses with the command's own flags.
func describe(about string, examples []string, codes exits) string {
	var b strings.Builder
	if about != "" {
		b.WriteString(strings.TrimSpace(about))
		b.WriteString("\n\n")
	}
	b.WriteString("Examples:\n")
	for _, e := range examples {
		for _, line := range strings.Split(e, "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	b.WriteString("\nExit codes:")
	for code := 0; code <= ExitUnverified; code++ {
		if m, ok := codes[code]; ok {
			b.WriteString("\n" + wrapIndent(fmt.Sprintf("  %d  ", code), m, helpWidth))
		}
	}
	return b.String()
}

// wrapIndent wraps text to width after prefix, indenting continuation
// lines to the prefix's width.
func wrapIndent(prefix, text string, width int) string {
	var b strings.Builder
	indent := strings.Repeat(" ", len(prefix))
	line := prefix
	started := false
	for _, w := range strings.Fields(text) {
		if started && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent + w
			continue
		}
		if started {
			line += " "
		}
		line += w
		started = true
	}
	b.WriteString(line)
	return b.String()
}
