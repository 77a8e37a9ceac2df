package cssurl

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"
)

// Ref is one URL a piece of CSS loads, as written (not resolved).
type Ref struct {
	URL string
	// Import is true for @import: a stylesheet, which loads in turn what
	// it names.
	Import bool
}

// Refs returns the URLs a stylesheet (or a style attribute's
// declarations) loads, read with a CSS Syntax tokenizer: url() and src()
// (also spelt with escapes), @import's string, and the strings of
// image-set(), -webkit-image-set() and image(). @namespace's URL is a
// name, not a load.
func Refs(text string) []Ref {
	l := css.NewLexer(parse.NewInputString(text))
	var out []Ref
	var (
		inImport, inNamespace bool
		// stringFns counts the open image-set() and image() functions
		// whose bare strings are URLs; depth the open parentheses.
		stringFns []int
		depth     int
	)
	add := func(u string) {
		if !inNamespace {
			out = append(out, Ref{URL: u, Import: inImport})
		}
	}
	for {
		tt, data := l.Next()
		switch tt {
		case css.ErrorToken:
			return out
		case css.AtKeywordToken:
			name := strings.ToLower(cssUnescape(string(data[1:])))
			inImport, inNamespace = name == "import", name == "namespace"
		case css.SemicolonToken, css.LeftBraceToken, css.RightBraceToken:
			inImport, inNamespace = false, false
		case css.URLToken:
			add(urlTokenValue(data))
		case css.BadURLToken:
			// A browser drops a bad url(); nothing loads.
		case css.FunctionToken:
			name := strings.ToLower(cssUnescape(string(data[:len(data)-1])))
			switch name {
			case "url", "src":
				// An escaped url( (the tokenizer made a function of it) or
				// src(): its argument, a string or the raw text to ')'.
				if u, ok := functionArgument(l); ok {
					add(u)
				}
				continue
			case "image-set", "-webkit-image-set", "image":
				stringFns = append(stringFns, depth)
			}
			depth++
		case css.LeftParenthesisToken:
			depth++
		case css.RightParenthesisToken:
			if depth > 0 {
				depth--
			}
			if n := len(stringFns); n > 0 && stringFns[n-1] == depth {
				stringFns = stringFns[:n-1]
			}
		case css.StringToken:
			switch {
			case inImport:
				add(cssString(data))
			case len(stringFns) > 0 && stringFns[len(stringFns)-1] == depth-1:
				add(cssString(data))
			}
		}
	}
}

// functionArgument reads a url() or src() function's argument up to its
// closing parenthesis.
func functionArgument(l *css.Lexer) (string, bool) {
	var raw bytes.Buffer
	str, isString := "", false
	for {
		tt, data := l.Next()
		switch tt {
		case css.ErrorToken:
			return "", false
		case css.RightParenthesisToken:
			if isString {
				return str, true
			}
			return cssUnescape(strings.TrimSpace(raw.String())), raw.Len() > 0
		case css.StringToken:
			str, isString = cssString(data), true
		case css.WhitespaceToken:
			if raw.Len() > 0 {
				raw.Write(data)
			}
		default:
			raw.Write(data)
		}
	}
}

// urlTokenValue is the URL of a url(...) token.
func urlTokenValue(tok []byte) string {
	s := string(tok)
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSuffix(s, ")")
	s = strings.Trim(s, " \t\n\r\f")
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		return cssString([]byte(s))
	}
	return cssUnescape(s)
}

// cssString is the value of a string token, its quotes removed and its
// escapes resolved.
func cssString(tok []byte) string {
	s := string(tok)
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		s = s[1:]
		if len(s) > 0 && s[len(s)-1] == q && !strings.HasSuffix(s, `\`+string(q)) {
			s = s[:len(s)-1]
		}
	}
	return cssUnescape(s)
}

// cssUnescape resolves CSS escapes (CSS Syntax 4.3.7): a backslash and up
// to six hex digits (and one whitespace) is a code point, a backslash and
// a newline is nothing (in strings), a backslash and any other character
// is that character.
func cssUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		j := i
		for j < len(s) && j-i < 6 && isHex(s[j]) {
			j++
		}
		if j > i {
			n, _ := strconv.ParseUint(s[i:j], 16, 32)
			r := rune(n)
			if r == 0 || r > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
			if j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\f') {
				j++
			} else if j+1 < len(s) && s[j] == '\r' && s[j+1] == '\n' {
				j += 2
			} else if j < len(s) && s[j] == '\r' {
				j++
			}
			i = j - 1
			continue
		}
		switch s[i] {
		case '\n', '\f':
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
