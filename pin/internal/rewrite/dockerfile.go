package rewrite

import (
	"errors"
	"fmt"
	"strings"
)

// span is a byte range [start, end) of a file.
type span struct{ start, end int }

type token struct {
	span
	text string
	line int
}

// dockerfileRefs finds the image of every FROM instruction, skipping
// scratch, earlier stage names and references with variables. It follows
// the escape parser directive, line continuations, comment lines inside
// them, and skips heredoc bodies.
func dockerfileRefs(data []byte) ([]ref, error) {
	lines := splitLines(data)
	esc := directiveEscape(data, lines)
	stages := map[string]bool{}
	var refs []ref
	for li := 0; li < len(lines); {
		if isBlankOrComment(data, lines[li]) {
			li++
			continue
		}
		first := li + 1
		var segs []segment
		for {
			seg, cont := continuation(data, lines[li], esc)
			segs = append(segs, segment{seg, li + 1})
			li++
			if !cont {
				break
			}
			for li < len(lines) && isBlankOrComment(data, lines[li]) {
				li++
			}
			if li >= len(lines) {
				break
			}
		}
		toks := tokenize(data, segs)
		if len(toks) == 0 {
			continue
		}
		for _, t := range toks[1:] {
			if d, ok := heredoc(t.text); ok {
				li = skipHeredoc(data, lines, li, d)
			}
		}
		if !strings.EqualFold(toks[0].text, "FROM") {
			continue
		}
		args := toks[1:]
		for len(args) > 0 && strings.HasPrefix(args[0].text, "--") {
			args = args[1:]
		}
		if len(args) == 0 {
			return nil, &lineError{first, errors.New("FROM without an image")}
		}
		img, rest := args[0], args[1:]
		var stage string
		if len(rest) > 0 {
			if len(rest) != 2 || !strings.EqualFold(rest[0].text, "AS") {
				return nil, &lineError{first, fmt.Errorf("FROM %s: want FROM [--platform=…] image [AS name]", img.text)}
			}
			stage = strings.ToLower(rest[1].text)
		}
		name := strings.ToLower(img.text)
		if name != "scratch" && !stages[name] && !strings.Contains(img.text, "$") {
			refs = append(refs, ref{value: img.text, start: img.start, end: img.end, line: img.line})
		}
		if stage != "" {
			stages[stage] = true
		}
	}
	return refs, nil
}

// splitLines returns each line's span, without its "\n" (or "\r\n").
func splitLines(data []byte) []span {
	var out []span
	start := 0
	for i := 0; i <= len(data); i++ {
		if i == len(data) || data[i] == '\n' {
			end := i
			if end > start && data[end-1] == '\r' {
				end--
			}
			if i < len(data) || start < len(data) {
				out = append(out, span{start, end})
			}
			start = i + 1
		}
	}
	return out
}

// directiveEscape reads the escape parser directive ("# escape=`") at the
// top of the file; the default is the backslash.
func directiveEscape(data []byte, lines []span) byte {
	for _, l := range lines {
		s := strings.TrimSpace(string(data[l.start:l.end]))
		if !strings.HasPrefix(s, "#") {
			break
		}
		k, v, ok := strings.Cut(strings.TrimSpace(s[1:]), "=")
		if !ok {
			break
		}
		if strings.EqualFold(strings.TrimSpace(k), "escape") {
			if v = strings.TrimSpace(v); v == "`" {
				return '`'
			}
		}
	}
	return '\\'
}

func isBlankOrComment(data []byte, l span) bool {
	s := strings.TrimSpace(string(data[l.start:l.end]))
	return s == "" || s[0] == '#'
}

// continuation returns the line's span without a trailing escape, and
// whether the instruction continues on the next line.
func continuation(data []byte, l span, esc byte) (span, bool) {
	end := l.end
	for end > l.start && (data[end-1] == ' ' || data[end-1] == '\t') {
		end--
	}
	if end > l.start && data[end-1] == esc {
		return span{l.start, end - 1}, true
	}
	return l, false
}

// segment is the part of one line that belongs to an instruction.
type segment struct {
	span
	line int
}

// tokenize splits segments on white space; a token never spans segments.
func tokenize(data []byte, segs []segment) []token {
	var out []token
	for _, s := range segs {
		line := s.line
		i := s.start
		for i < s.end {
			for i < s.end && (data[i] == ' ' || data[i] == '\t') {
				i++
			}
			j := i
			for j < s.end && data[j] != ' ' && data[j] != '\t' {
				j++
			}
			if j > i {
				out = append(out, token{span: span{i, j}, text: string(data[i:j]), line: line})
			}
			i = j
		}
	}
	return out
}

// heredoc returns the delimiter of a heredoc token ("<<EOF", "<<-'EOF'").
func heredoc(t string) (delim string, ok bool) {
	if !strings.HasPrefix(t, "<<") {
		return "", false
	}
	d := strings.TrimPrefix(strings.TrimPrefix(t, "<<"), "-")
	d = strings.Trim(d, `"'`)
	return d, d != ""
}

// skipHeredoc returns the index of the line after the heredoc's closing
// delimiter, starting at line li.
func skipHeredoc(data []byte, lines []span, li int, delim string) int {
	for ; li < len(lines); li++ {
		if strings.TrimLeft(string(data[lines[li].start:lines[li].end]), "\t") == delim {
			return li + 1
		}
	}
	return li
}
